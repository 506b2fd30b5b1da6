package toolbox

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEcho(t *testing.T) {
	reg := newTestRegistry(t, Config{})
	tests := []struct {
		name string
		give string
		want string
	}{
		{"text", `{"text":"hello"}`, `{"text":"hello"}`},
		{"empty", `{"text":""}`, `{"text":""}`},
		{"unicode and escapes", `{"text":"é \"q\" \n"}`, `{"text":"é \"q\" \n"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, reg, NameEcho, tt.give)
			assert.False(t, res.IsError())
			assert.Equal(t, tt.want, res.Content())
		})
	}
}

func TestEchoRejects(t *testing.T) {
	assertRejects(t, newTestRegistry(t, Config{}), NameEcho, []rejectCase{
		{"missing", `{}`, `"text" is required`},
		{"number", `{"text":1}`, `"text" must be a string, not a number`},
		{"null", `{"text":null}`, `"text" must be a string, not null`},
		{"object", `{"text":{}}`, `"text" must be a string, not an object`},
		{"unknown", `{"text":"a","extra":1}`, `unknown argument "extra"; allowed: "text"`},
	})
}
