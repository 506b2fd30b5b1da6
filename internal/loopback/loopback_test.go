package loopback

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHostAndAddress(t *testing.T) {
	for _, h := range []string{"localhost", "LocalHost", "127.0.0.1", "127.1.2.3", "::1"} {
		assert.True(t, Host(h), h)
	}
	for _, h := range []string{"", "example.com", "10.0.0.1", "[::1]", "localhost.example"} {
		assert.False(t, Host(h), h)
	}
	assert.True(t, Address("127.0.0.1:7233"))
	assert.True(t, Address("[::1]:7233"))
	assert.True(t, Address("localhost:7233"))
	assert.False(t, Address("temporal.example:7233"))
	assert.False(t, Address("127.0.0.1"), "no port")
}

func TestHostHeader(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{"localhost", true},
		{"LOCALHOST:8081", true},
		{"127.0.0.1", true},
		{"127.0.0.1:8081", true},
		{"[::1]", true},
		{"[::1]:8081", true},
		{"::1", false},
		{"127.1:8081", false},
		{"2130706433", false},
		{"localhost.", false},
		{"sub.localhost", false},
		{"evil.example", false},
		{"evil.example:8081", false},
		{"127.0.0.1:x", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			assert.Equal(t, tt.want, HostHeader(tt.give))
		})
	}
}

func TestHostAllowed(t *testing.T) {
	tests := []struct {
		name    string
		give    string
		allowed []string
		want    bool
	}{
		{"loopback", "127.0.0.1:8250", nil, true},
		{"allowed name with port", "Hooks.Example.com:443", []string{"hooks.example.com"}, true},
		{"allowed name", "hooks.example.com", []string{"hooks.example.com"}, true},
		{"other name", "evil.example.com", []string{"hooks.example.com"}, false},
		{"empty", "", []string{""}, false},
		{"bad port", "hooks.example.com:x", []string{"hooks.example.com"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, HostAllowed(tt.give, tt.allowed))
		})
	}
}
