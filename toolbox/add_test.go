package toolbox

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAdd(t *testing.T) {
	reg := newTestRegistry(t, Config{})
	tests := []struct {
		name string
		give string
		want string
	}{
		{"small", `{"left":20,"right":22}`, `{"sum":42}`},
		{"negative", `{"left":-20,"right":5}`, `{"sum":-15}`},
		{"largest safe", `{"left":9007199254740990,"right":1}`, `{"sum":9007199254740991}`},
		{"beyond 2^53 exact", `{"left":9007199254740992,"right":1}`, `{"sum":"9007199254740993n"}`},
		{"beyond int64", `{"left":9223372036854775807,"right":9223372036854775807}`, `{"sum":"18446744073709551614n"}`},
		{"negative big", `{"left":-9007199254740992,"right":-1}`, `{"sum":"-9007199254740993n"}`},
		{"floats exact decimal", `{"left":0.1,"right":0.2}`, `{"sum":0.3}`},
		{"mixed", `{"left":20,"right":22.5}`, `{"sum":42.5}`},
		{"exponent", `{"left":1e3,"right":1}`, `{"sum":1001}`},
		{"large float", `{"left":1e308,"right":1e307}`, `{"sum":1.1e+308}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, reg, NameAdd, tt.give)
			assert.False(t, res.IsError(), res.Content())
			assert.Equal(t, tt.want, res.Content())
		})
	}
}

func TestAddHugeIntegers(t *testing.T) {
	reg := newTestRegistry(t, Config{})
	nines := strings.Repeat("9", MaxIntegerDigits)
	res := run(t, reg, NameAdd, `{"left":`+nines+`,"right":1}`)
	assert.False(t, res.IsError())
	assert.Equal(t, `{"sum":"1`+strings.Repeat("0", MaxIntegerDigits)+`n"}`, res.Content())
}

func TestAddRejects(t *testing.T) {
	tooLong := strings.Repeat("1", MaxIntegerDigits+1)
	assertRejects(t, newTestRegistry(t, Config{}), NameAdd, []rejectCase{
		{"string operand", `{"left":"twenty","right":22}`, `"left" must be a number, not a string`},
		{"numeric string", `{"left":"20","right":22}`, `"left" must be a number, not a string`},
		{"bool", `{"left":20,"right":true}`, `"right" must be a number, not a boolean`},
		{"null", `{"left":null,"right":1}`, `"left" must be a number, not null`},
		{"array", `{"left":[1],"right":1}`, `"left" must be a number, not an array`},
		{"missing left", `{"right":22}`, `"left" is required`},
		{"missing right", `{"left":20}`, `"right" is required`},
		{"unknown", `{"left":1,"right":2,"third":3}`, `unknown argument "third"; allowed: "left", "right"`},
		{"too many digits", `{"left":` + tooLong + `,"right":1}`, `"left" must have at most 1000 digits`},
		{"float overflow", `{"left":1e400,"right":1}`, `"left" must be a number within the float64 range`},
		{"huge exponent", `{"left":1,"right":1e99999999999999999999}`, `"right" must be a number within the float64 range`},
		{"sum overflow", `{"left":1.7e308,"right":1.7e308}`, `the sum of "left" and "right" is beyond the float64 range`},
	})
}
