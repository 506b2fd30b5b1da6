package toolcore

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustArgs(t *testing.T, args string) Arguments {
	t.Helper()
	c, err := NewToolCall("call-1", "tool", []byte(args))
	require.NoError(t, err)
	return c.Arguments()
}

const accessorArgs = `{
	"s": "héllo\n",
	"empty": "",
	"n": null,
	"t": true,
	"f": false,
	"i": 42,
	"neg": -7,
	"zero": -0,
	"big": 9007199254740993,
	"pow": 9007199254740992,
	"huge": 123456789012345678901234567890,
	"maxi": 9223372036854775807,
	"over": 9223372036854775808,
	"mini": -9223372036854775808,
	"frac": 1.5,
	"exp": 1e3,
	"one": 1.0,
	"tiny": 1e-400,
	"zerox": 0e-400,
	"inf": 1e400,
	"sub": 5e-324,
	"tenth": 0.1,
	"bigexp": 1e300,
	"o": {"a": 1},
	"a": [1, 2]
}`

func TestArgumentsString(t *testing.T) {
	tests := []struct {
		key     string
		want    string
		wantErr string
	}{
		{"s", "héllo\n", ""},
		{"empty", "", ""},
		{"missing", "", `"missing" is required`},
		{"n", "", `"n" must be a string, got null`},
		{"i", "", `"i" must be a string, got number`},
		{"t", "", `"t" must be a string, got boolean`},
		{"o", "", `"o" must be a string, got object`},
		{"a", "", `"a" must be a string, got array`},
	}
	args := mustArgs(t, accessorArgs)
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, err := args.String(tt.key)
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestArgumentsNumbers(t *testing.T) {
	tests := []struct {
		key        string
		wantNumber json.Number
		wantInt    int64
		intErr     string
		wantFloat  float64
		floatErr   string
	}{
		{key: "i", wantNumber: "42", wantInt: 42, wantFloat: 42},
		{key: "neg", wantNumber: "-7", wantInt: -7, wantFloat: -7},
		{key: "zero", wantNumber: "-0", wantInt: 0, wantFloat: math.Copysign(0, -1)},
		{key: "big", wantNumber: "9007199254740993", wantInt: 9007199254740993,
			floatErr: `"big" must be an integer that float64 holds exactly, got 9007199254740993`},
		{key: "pow", wantNumber: "9007199254740992", wantInt: 9007199254740992, wantFloat: 9007199254740992},
		{key: "huge", wantNumber: "123456789012345678901234567890",
			intErr:   `"huge" must be an integer between -9223372036854775808 and 9223372036854775807, got 123456789012345678901234567890`,
			floatErr: `"huge" must be an integer that float64 holds exactly, got 123456789012345678901234567890`},
		{key: "maxi", wantNumber: "9223372036854775807", wantInt: math.MaxInt64,
			floatErr: `"maxi" must be an integer that float64 holds exactly, got 9223372036854775807`},
		{key: "over", wantNumber: "9223372036854775808",
			intErr: `"over" must be an integer between -9223372036854775808 and 9223372036854775807, got 9223372036854775808`, wantFloat: 9223372036854775808},
		{key: "mini", wantNumber: "-9223372036854775808", wantInt: math.MinInt64, wantFloat: -9223372036854775808},
		{key: "frac", wantNumber: "1.5", intErr: `"frac" must be an integer, got 1.5`, wantFloat: 1.5},
		{key: "exp", wantNumber: "1e3", intErr: `"exp" must be an integer, got 1e3`, wantFloat: 1000},
		{key: "one", wantNumber: "1.0", intErr: `"one" must be an integer, got 1.0`, wantFloat: 1},
		{key: "tenth", wantNumber: "0.1", intErr: `"tenth" must be an integer, got 0.1`, wantFloat: 0.1},
		{key: "bigexp", wantNumber: "1e300", intErr: `"bigexp" must be an integer, got 1e300`, wantFloat: 1e300},
		{key: "sub", wantNumber: "5e-324", intErr: `"sub" must be an integer, got 5e-324`, wantFloat: 5e-324},
		{key: "tiny", wantNumber: "1e-400", intErr: `"tiny" must be an integer, got 1e-400`,
			floatErr: `"tiny" must be a number within float64 range, got 1e-400`},
		{key: "zerox", wantNumber: "0e-400", intErr: `"zerox" must be an integer, got 0e-400`, wantFloat: 0},
		{key: "inf", wantNumber: "1e400", intErr: `"inf" must be an integer, got 1e400`,
			floatErr: `"inf" must be a number within float64 range, got 1e400`},
	}
	args := mustArgs(t, accessorArgs)
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			n, err := args.Number(tt.key)
			require.NoError(t, err)
			assert.Equal(t, tt.wantNumber, n)

			i, err := args.Int64(tt.key)
			if tt.intErr != "" {
				assert.EqualError(t, err, tt.intErr)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tt.wantInt, i)
			}

			f, err := args.Float64(tt.key)
			if tt.floatErr != "" {
				assert.EqualError(t, err, tt.floatErr)
			} else {
				require.NoError(t, err)
				assert.Equal(t, math.Float64bits(tt.wantFloat), math.Float64bits(f), "got %v", f)
			}
		})
	}
}

func TestArgumentsAccessorKindErrors(t *testing.T) {
	args := mustArgs(t, accessorArgs)
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"Number of string", func() error { _, err := args.Number("s"); return err }, `"s" must be a number, got string`},
		{"Number of missing", func() error { _, err := args.Number("x"); return err }, `"x" is required`},
		{"Int64 of string", func() error { _, err := args.Int64("s"); return err }, `"s" must be an integer, got string`},
		{"Int64 of null", func() error { _, err := args.Int64("n"); return err }, `"n" must be an integer, got null`},
		{"Int64 of missing", func() error { _, err := args.Int64("x"); return err }, `"x" is required`},
		{"Float64 of bool", func() error { _, err := args.Float64("t"); return err }, `"t" must be a number, got boolean`},
		{"Float64 of missing", func() error { _, err := args.Float64("x"); return err }, `"x" is required`},
		{"Bool of number", func() error { _, err := args.Bool("i"); return err }, `"i" must be a boolean, got number`},
		{"Bool of string", func() error { _, err := args.Bool("s"); return err }, `"s" must be a boolean, got string`},
		{"Bool of missing", func() error { _, err := args.Bool("x"); return err }, `"x" is required`},
		{"long key is clipped", func() error { _, err := args.Bool(strings.Repeat("k", 100)); return err },
			`"` + strings.Repeat("k", 64) + `"... is required`},
		{"long literal is clipped", func() error {
			_, err := mustArgs(t, `{"n":`+strings.Repeat("9", 100)+`}`).Int64("n")
			return err
		}, `"n" must be an integer between -9223372036854775808 and 9223372036854775807, got ` + strings.Repeat("9", 32) + `...`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.EqualError(t, tt.call(), tt.want)
		})
	}
}

func TestArgumentsBool(t *testing.T) {
	args := mustArgs(t, accessorArgs)
	v, err := args.Bool("t")
	require.NoError(t, err)
	assert.True(t, v)
	v, err = args.Bool("f")
	require.NoError(t, err)
	assert.False(t, v)
}

func TestArgumentsMembers(t *testing.T) {
	args := mustArgs(t, `{"b":{"y":2,"x":[1,"}"]},"a":"x\"y","":null,"é":1,"\n":true}`)
	assert.Equal(t, []string{"", "\n", "a", "b", "é"}, args.Keys())
	assert.Equal(t, 5, args.Len())
	assert.True(t, args.Has(""))
	assert.True(t, args.Has("\n"))
	assert.True(t, args.Has("é"))
	assert.False(t, args.Has("c"))
	assert.False(t, args.Has("B"))

	tests := []struct {
		key  string
		want string
	}{
		{"", `null`},
		{"\n", `true`},
		{"a", `"x\"y"`},
		{"b", `{"x":[1,"}"],"y":2}`},
		{"é", `1`},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			v, ok := args.Value(tt.key)
			require.True(t, ok)
			assert.Equal(t, tt.want, string(v))
		})
	}
	v, ok := args.Value("missing")
	assert.False(t, ok)
	assert.Nil(t, v)
}

func TestArgumentsZeroValueIsEmptyObject(t *testing.T) {
	var args Arguments
	assert.Equal(t, "{}", string(args.Raw()))
	assert.Empty(t, args.Keys())
	assert.NotNil(t, args.Keys())
	assert.Equal(t, 0, args.Len())
	assert.False(t, args.Has("a"))
	_, err := args.String("a")
	assert.EqualError(t, err, `"a" is required`)
	var m map[string]any
	require.NoError(t, args.Decode(&m))
	assert.Empty(t, m)
	assert.Equal(t, mustArgs(t, `{}`).Raw(), args.Raw())
}

func TestArgumentsJSON(t *testing.T) {
	args := mustArgs(t, `{"b":1,"a":[true]}`)
	out, err := json.Marshal(struct {
		Args Arguments `json:"args"`
	}{args})
	require.NoError(t, err)
	assert.Equal(t, `{"args":{"a":[true],"b":1}}`, string(out))

	var back struct {
		Args Arguments `json:"args"`
	}
	require.NoError(t, json.Unmarshal(out, &back))
	assert.Equal(t, args, back.Args)

	tests := []struct {
		name string
		give string
		want string
	}{
		{"array", `[]`, `arguments must be a JSON object, got array`},
		{"duplicate", `{"a":1,"a":1}`, `duplicate key "a" in arguments`},
		{"too deep", nested(MaxArgumentsDepth + 1), `arguments nests deeper than 64 levels (at byte 320 of arguments)`},
		{"too large", `{"s":"` + strings.Repeat("a", MaxCallBytes) + `"}`, `arguments: 262152 bytes, limit 262144`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := args
			assert.EqualError(t, a.UnmarshalJSON([]byte(tt.give)), tt.want)
			assert.Equal(t, args, a, "unchanged on error")
		})
	}
}

type point struct {
	X int64 `json:"x"`
	Y int64 `json:"y"`
}

type addArgs struct {
	Left  float64 `json:"left"`
	Right float64 `json:"right"`
}

type inner struct {
	Shared string `json:"shared"`
	Deep   int    `json:"deep"`
}

type richArgs struct {
	inner
	Name    string            `json:"name"`
	Count   int8              `json:"count"`
	Size    uint16            `json:"size"`
	ID      int64             `json:"id"`
	Exact   json.Number       `json:"exact"`
	Ratio   float32           `json:"ratio"`
	Opt     *string           `json:"opt"`
	Tags    []string          `json:"tags"`
	Pair    [2]int            `json:"pair"`
	Labels  map[string]int    `json:"labels"`
	Point   point             `json:"point"`
	Points  []point           `json:"points"`
	Any     any               `json:"any"`
	Big     *big.Int          `json:"big"`
	Quoted  int               `json:"quoted,string"`
	Raw     json.RawMessage   `json:"raw"`
	Bytes   []byte            `json:"bytes"`
	Skipped string            `json:"-"`
	NoTag   bool              // named by its Go name
	Nested  map[string][]bool `json:"nested"`
}

func TestArgumentsDecode(t *testing.T) {
	args := mustArgs(t, `{
		"shared": "s", "deep": 3,
		"name": "n", "count": -128, "size": 65535, "id": 9007199254740993,
		"exact": 123456789012345678901234567890.5, "ratio": 0.1, "opt": null,
		"tags": ["a"], "pair": [1, 2], "labels": {"k": 1}, "point": {"x": 1, "y": 2},
		"points": [{"x": 3, "y": 4}], "any": {"n": 18446744073709551617, "l": [1.5]},
		"big": 18446744073709551617, "quoted": "12", "raw": {"z": 1, "a": 2},
		"bytes": "aGk=", "NoTag": true, "nested": {"a": [true, false]}
	}`)
	var got richArgs
	require.NoError(t, args.Decode(&got))
	assert.Equal(t, "s", got.Shared)
	assert.Equal(t, 3, got.Deep)
	assert.Equal(t, int8(-128), got.Count)
	assert.Equal(t, uint16(65535), got.Size)
	assert.Equal(t, int64(9007199254740993), got.ID)
	assert.Equal(t, json.Number("123456789012345678901234567890.5"), got.Exact)
	assert.Equal(t, float32(0.1), got.Ratio)
	assert.Nil(t, got.Opt)
	assert.Equal(t, [2]int{1, 2}, got.Pair)
	assert.Equal(t, map[string]int{"k": 1}, got.Labels)
	assert.Equal(t, point{1, 2}, got.Point)
	assert.Equal(t, []point{{3, 4}}, got.Points)
	assert.Equal(t, map[string]any{"n": json.Number("18446744073709551617"), "l": []any{json.Number("1.5")}}, got.Any)
	assert.Equal(t, "18446744073709551617", got.Big.String())
	assert.Equal(t, 12, got.Quoted)
	assert.Equal(t, `{"a":2,"z":1}`, string(got.Raw))
	assert.Equal(t, []byte("hi"), got.Bytes)
	assert.True(t, got.NoTag)
	assert.Equal(t, map[string][]bool{"a": {true, false}}, got.Nested)
}

func TestArgumentsDecodeExactNumbers(t *testing.T) {
	args := mustArgs(t, `{"id":9007199254740993}`)

	var asInt struct {
		ID int64 `json:"id"`
	}
	require.NoError(t, args.Decode(&asInt))
	assert.Equal(t, int64(9007199254740993), asInt.ID)

	var asNumber struct {
		ID json.Number `json:"id"`
	}
	require.NoError(t, args.Decode(&asNumber))
	assert.Equal(t, json.Number("9007199254740993"), asNumber.ID)

	var asAny map[string]any
	require.NoError(t, args.Decode(&asAny))
	assert.Equal(t, json.Number("9007199254740993"), asAny["id"])

	var asFloat struct {
		ID float64 `json:"id"`
	}
	assert.EqualError(t, args.Decode(&asFloat), `"id" must be an integer that float64 holds exactly, got 9007199254740993`)
}

func TestArgumentsDecodeRejects(t *testing.T) {
	tests := []struct {
		name   string
		args   string
		target func() any
		want   string
	}{
		{"wrong kind", `{"left":"20","right":22}`, func() any { return &addArgs{} }, `"left" must be a number, got string`},
		{"unknown field", `{"left":1,"right":2,"middle":3}`, func() any { return &addArgs{} }, `unknown field "middle"`},
		{"case mismatch", `{"LEFT":1,"right":2}`, func() any { return &addArgs{} }, `unknown field "LEFT" (did you mean "left"?)`},
		{"case collision", `{"left":1,"Left":2}`, func() any { return &addArgs{} }, `unknown field "Left" (did you mean "left"?)`},
		{"null into float", `{"left":null}`, func() any { return &addArgs{} }, `"left" must be a number, got null`},
		{"null into struct", `{"point":null}`, func() any { return &richArgs{} }, `"point" must be an object, got null`},
		{"null into array", `{"pair":null}`, func() any { return &richArgs{} }, `"pair" must be an array, got null`},
		{"int overflow", `{"count":128}`, func() any { return &richArgs{} }, `"count" must be an integer between -128 and 127, got 128`},
		{"uint negative", `{"size":-1}`, func() any { return &richArgs{} }, `"size" must be an integer between 0 and 65535, got -1`},
		{"uint fraction", `{"size":1.5}`, func() any { return &richArgs{} }, `"size" must be a non-negative integer, got 1.5`},
		{"int exponent", `{"id":1e3}`, func() any { return &richArgs{} }, `"id" must be an integer, got 1e3`},
		{"float32 overflow", `{"ratio":1e39}`, func() any { return &richArgs{} }, `"ratio" must be a number within float32 range, got 1e39`},
		{"float32 inexact integer", `{"ratio":16777217}`, func() any { return &richArgs{} }, `"ratio" must be an integer that float32 holds exactly, got 16777217`},
		{"json.Number from string", `{"exact":"12"}`, func() any { return &richArgs{} }, `"exact" must be a number, got string`},
		{"array too long", `{"pair":[1,2,3]}`, func() any { return &richArgs{} }, `"pair" must be an array of 2 elements, got 3`},
		{"array too short", `{"pair":[1]}`, func() any { return &richArgs{} }, `"pair" must be an array of 2 elements, got 1`},
		{"nested path", `{"points":[{"x":1,"y":2},{"x":"1"}]}`, func() any { return &richArgs{} }, `"points[1].x" must be an integer, got string`},
		{"nested unknown", `{"point":{"x":1,"z":2}}`, func() any { return &richArgs{} }, `unknown field "point.z"`},
		{"map value", `{"labels":{"a":1,"b":true}}`, func() any { return &richArgs{} }, `"labels.b" must be an integer, got boolean`},
		{"skipped field is unknown", `{"Skipped":"x"}`, func() any { return &richArgs{} }, `unknown field "Skipped"`},
		{"bool from string", `{"NoTag":"true"}`, func() any { return &richArgs{} }, `"NoTag" must be a boolean, got string`},
		{"slice element", `{"nested":{"a":[true,1]}}`, func() any { return &richArgs{} }, `"nested.a[1]" must be a boolean, got number`},
		{"quoted left to encoding/json", `{"quoted":"x"}`, func() any { return &richArgs{} }, `decode arguments: json: invalid use of ,string struct tag, trying to unmarshal "x" into int`},
		{"big.Int left to encoding/json", `{"big":1.5}`, func() any { return &richArgs{} }, `decode arguments: math/big: cannot unmarshal "1.5" into a *big.Int`},
		{"not an object target", `{}`, func() any { return &[]int{} }, `arguments must be an array, got object`},
		{"map of ints", `{"a":1.5}`, func() any { return &map[string]int{} }, `"a" must be an integer, got 1.5`},
		{"non-pointer target", `{}`, func() any { return addArgs{} }, `decode arguments: want a non-nil pointer, got toolcore.addArgs`},
		{"nil pointer target", `{}`, func() any { return (*addArgs)(nil) }, `decode arguments: want a non-nil pointer, got *toolcore.addArgs`},
		{"nil target", `{}`, func() any { return nil }, `decode arguments: want a non-nil pointer, got <nil>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.EqualError(t, mustArgs(t, tt.args).Decode(tt.target()), tt.want)
		})
	}
}

type ambiguousA struct {
	Name string
}

type ambiguousB struct {
	Name string
}

type embedsAmbiguous struct {
	ambiguousA
	ambiguousB
	Other int `json:"other"`
}

type titled struct {
	Title string `json:"Title"`
}

type embedsDominant struct {
	titled
	Title string // shallower, wins over the promoted tagged field of the same name
}

type Exported struct {
	Promoted string `json:"promoted"`
}

type embedsPointer struct {
	*Exported
	Own string `json:"own"`
}

func TestArgumentsDecodeEmbedded(t *testing.T) {
	var amb embedsAmbiguous
	assert.EqualError(t, mustArgs(t, `{"Name":"x"}`).Decode(&amb), `unknown field "Name"`,
		"encoding/json drops names promoted ambiguously")
	require.NoError(t, mustArgs(t, `{"other":1}`).Decode(&amb))
	assert.Equal(t, 1, amb.Other)

	var dom embedsDominant
	require.NoError(t, mustArgs(t, `{"Title":"x"}`).Decode(&dom))
	assert.Equal(t, "x", dom.Title)
	assert.Empty(t, dom.titled.Title)

	var ptr embedsPointer
	require.NoError(t, mustArgs(t, `{"promoted":"p","own":"o"}`).Decode(&ptr))
	require.NotNil(t, ptr.Exported)
	assert.Equal(t, "p", ptr.Promoted)
	assert.Equal(t, "o", ptr.Own)
}

func TestArgumentsDecodeIntoArguments(t *testing.T) {
	args := mustArgs(t, `{"b":[1,{"d":1,"c":2}],"a":"x"}`)
	var nestedArgs struct {
		B []Arguments `json:"b"`
		A string      `json:"a"`
	}
	err := args.Decode(&nestedArgs)
	assert.EqualError(t, err, `decode arguments: arguments must be a JSON object, got number`)

	var whole Arguments
	require.NoError(t, args.Decode(&whole))
	assert.Equal(t, args, whole)

	var dec struct {
		O Arguments `json:"o"`
	}
	require.NoError(t, mustArgs(t, `{"o":{"y":1,"x":2}}`).Decode(&dec))
	assert.Equal(t, []string{"x", "y"}, dec.O.Keys())
}

// sharedInner is embedded twice, through two different structs, at the same depth.
type sharedInner struct {
	X int `json:"x"`
}

type viaA struct{ sharedInner }

type viaB struct{ sharedInner }

type embedsTwice struct {
	viaA
	viaB
	Y int `json:"y"`
}

// Decode and Serialize resolve fields alike: a name promoted through two embeddings of the same
// struct is ambiguous, so encoding/json drops it, Serialize omits it, and Decode refuses it as an
// unknown field with toolgate's message (not encoding/json's).
func TestArgumentsDecodeAgreesWithSerializeOnDoublyEmbedded(t *testing.T) {
	v := embedsTwice{Y: 2}
	v.viaA.X, v.viaB.X = 1, 1
	std, err := json.Marshal(v)
	require.NoError(t, err)
	require.JSONEq(t, `{"y":2}`, string(std), "encoding/json drops the ambiguous x")
	got, err := Serialize(v)
	require.NoError(t, err)
	assert.Equal(t, `{"y":2}`, got)

	var dec embedsTwice
	assert.EqualError(t, mustArgs(t, `{"x":1,"y":2}`).Decode(&dec), `unknown field "x"`)
	require.NoError(t, mustArgs(t, `{"y":2}`).Decode(&dec))
	assert.Equal(t, 2, dec.Y)
}
