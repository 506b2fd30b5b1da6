package wire_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolgate/toolgate/wire"
)

func TestPriorityCheck(t *testing.T) {
	tests := []struct {
		name    string
		give    wire.Priority
		wantErr bool
	}{
		{name: "zero", give: wire.Priority{}},
		{name: "full", give: wire.Priority{Level: 1, FairnessKey: "agent-a", FairnessWeight: 2}},
		{name: "level too high", give: wire.Priority{Level: 6}, wantErr: true},
		{name: "negative level", give: wire.Priority{Level: -1}, wantErr: true},
		{name: "key too long", give: wire.Priority{FairnessKey: strings.Repeat("k", 65)}, wantErr: true},
		{name: "negative weight", give: wire.Priority{FairnessWeight: -1}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.give.Check()
			assert.Equal(t, tt.wantErr, err != nil, "%v", err)
		})
	}
}

func TestFairnessKeyOf(t *testing.T) {
	long := strings.Repeat("w", 100)
	tests := []struct {
		name string
		give string
		want string
	}{
		{name: "short kept", give: "agent-1", want: "agent-1"},
		{name: "64 bytes kept", give: strings.Repeat("x", 64), want: strings.Repeat("x", 64)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, wire.FairnessKeyOf(tt.give)) })
	}
	got := wire.FairnessKeyOf(long)
	assert.Len(t, got, wire.MaxFairnessKeyBytes)
	assert.NotEqual(t, got, wire.FairnessKeyOf(long+"x"), "distinct long IDs keep distinct keys")
}
