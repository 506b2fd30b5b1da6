package toolcore

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Types for the struct rules. Their methods panic: Serialize must never call them.

type serSum struct {
	Sum   int  `json:"sum"`
	Exact bool `json:"exact"`
}

func (serSum) MarshalJSON() ([]byte, error) { panic("MarshalJSON called") }
func (serSum) String() string               { panic("String called") }

type serHostileString string

func (serHostileString) Error() string                { panic("Error called") }
func (serHostileString) MarshalText() ([]byte, error) { panic("MarshalText called") }

type serTags struct {
	Plain   string
	Renamed int `json:"renamed"`
	Skipped int `json:"-"`
	//lint:ignore SA5008 fixture: the tag "-," names the field "-", as in encoding/json
	Dash     int            `json:"-,"`
	Empty    string         `json:",omitempty"`
	EmptyPtr *int           `json:"emptyPtr,omitempty"`
	EmptyMap map[string]int `json:"emptyMap,omitempty"`
	Zero     [2]int         `json:"zero,omitzero"`
	Kept     string         `json:"kept,omitempty"`
	//lint:ignore SA5008 fixture: an invalid tag name falls back to the Go name, as in encoding/json
	BadTag    int `json:"a\"b"`
	Upper     int `json:"Z"`
	Unicode   int `json:"é"`
	Interface any
}

type serInner struct {
	A int
	B int `json:"b"`
}

type serInnerB struct {
	A int
	C int
}

type serInnerC struct {
	C int
}

type serEmbeds struct {
	serInner       // promoted: A, b
	*serInnerC     // followed; absent when nil
	B          int `json:"B"` // distinct from "b"
}

type serBytes []byte

type serConflict struct {
	serInner  // A at depth 1, ambiguous with serInnerB's A: dropped
	serInnerB // C promoted
}

type serShadow struct {
	serInner
	A string // depth 0 wins
}

type serTaggedEmbed struct {
	serInner `json:"inner"`
}

type serNode struct {
	Name string
	Next *serNode `json:",omitempty"`
}

type serAnyNode struct {
	Self any
}

type serUnexported struct {
	Visible int
	//lint:ignore U1000 fixture: an unexported field makes the struct opaque
	hidden int
}

type serBlank struct {
	A int
	_ int
}

//lint:ignore U1000 fixture: embedded in serEmbedsUnexportedNonStruct
type serEmbeddedInt int

type serEmbedsUnexportedNonStruct struct {
	//lint:ignore U1000 fixture: an unexported embedded non-struct makes the struct opaque
	serEmbeddedInt
	A int
}

type serEmbedsTime struct {
	time.Time
}

type serHolder struct {
	Items []any `json:"items"`
}

type serRaw struct {
	Data json.RawMessage `json:"data"`
	Num  json.Number     `json:"num"`
}

type serBigAlias = big.Int

// serEmbedsBig reaches a big.Int through an unexported embedded field: reflect marks it
// read-only, so Serialize reads it in place.
type serEmbedsBig struct {
	serBigAlias `json:"n"`
}

type serBig struct {
	N big.Int  `json:"n"`
	P *big.Int `json:"p"`
}

func serMustBig(t testing.TB, s string) *big.Int {
	t.Helper()
	x, ok := new(big.Int).SetString(s, 10)
	require.True(t, ok)
	return x
}

func TestSerializeValues(t *testing.T) {
	seven := 7
	shared := &serNode{Name: "shared"}
	bigN := serMustBig(t, "9007199254740993")
	max4096 := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), MaxBigIntBits), big.NewInt(1))
	var nilPtr *serNode
	var nilMap map[string]int
	var nilSlice []int
	var nilFunc func()
	var nilRaw json.RawMessage
	var nilBig *big.Int

	tests := []struct {
		name string
		give any
		want string
	}{
		{"map", map[string]any{"sum": 42, "exact": true}, `{"exact":true,"sum":42}`},
		{"struct with tags, methods never called", serSum{Sum: 42, Exact: true}, `{"exact":true,"sum":42}`},
		{"pointer to struct", &serSum{Sum: 42, Exact: true}, `{"exact":true,"sum":42}`},
		{"nil", nil, `null`},
		{"nil pointer", nilPtr, `null`},
		{"nil map", nilMap, `null`},
		{"nil slice", nilSlice, `null`},
		{"nil func", nilFunc, `null`},
		{"nil raw message", nilRaw, `null`},
		{"nil big.Int", nilBig, `null`},
		{"func", func() {}, `"[Function]"`},
		{"method value", serSum{}.String, `"[Function]"`},
		{"true", true, `true`},
		{"int64 min", int64(math.MinInt64), `-9223372036854775808`},
		{"uint64 max", uint64(math.MaxUint64), `18446744073709551615`},
		{"int8", int8(-8), `-8`},
		{"uintptr", uintptr(12), `12`},
		{"duration is an integer", 1500 * time.Millisecond, `1500000000`},
		{"string escapes", "q\"b\\s/\b\f\n\r\t\x00\x1f\x7f", `"q\"b\\s/\b\f\n\r\t\u0000\u001f` + "\x7f" + `"`},
		{"no HTML or separator escapes", "<a&b> \u2028\u2029", "\"<a&b> \u2028\u2029\""},
		{"invalid UTF-8 is replaced per byte", "a\xffb\xc3(\xed\xa0\x80", "\"a\uFFFDb\uFFFD(\uFFFD\uFFFD\uFFFD\""},
		{"string kind with methods", serHostileString("plain"), `"plain"`},
		{"tags", serTags{Plain: "p", Renamed: 1, Skipped: 2, Dash: 3, Kept: "k", BadTag: 4, Upper: 5, Unicode: 6},
			`{"-":3,"BadTag":4,"Interface":null,"Plain":"p","Z":5,"kept":"k","renamed":1,"é":6}`},
		{"omitempty keeps non-empty", serTags{EmptyPtr: &seven, EmptyMap: map[string]int{"x": 1}, Zero: [2]int{0, 1}},
			`{"-":0,"BadTag":0,"Interface":null,"Plain":"","Z":0,"emptyMap":{"x":1},"emptyPtr":7,"renamed":0,"zero":[0,1],"é":0}`},
		{"embedded structs are promoted", serEmbeds{serInner: serInner{A: 1, B: 2}, B: 3}, `{"A":1,"B":3,"b":2}`},
		{"embedded pointer is followed", serEmbeds{serInnerC: &serInnerC{C: 8}, B: 3}, `{"A":0,"B":3,"C":8,"b":0}`},
		{"ambiguous promoted names are dropped", serConflict{serInner{A: 1, B: 2}, serInnerB{A: 3, C: 4}}, `{"C":4,"b":2}`},
		{"shallower field wins", serShadow{serInner: serInner{A: 1, B: 2}, A: "top"}, `{"A":"top","b":2}`},
		{"tagged embedded struct is a field", serTaggedEmbed{serInner{A: 1, B: 2}}, `{"inner":{"A":1,"b":2}}`},
		{"anonymous struct", struct {
			Z int
			A []string
		}{1, []string{"x"}}, `{"A":["x"],"Z":1}`},
		{"keys sort by bytes", map[string]int{"b": 1, "a": 2, "B": 3, "é": 4, "": 5, "aa": 6}, `{"":5,"B":3,"a":2,"aa":6,"b":1,"é":4}`},
		{"keys sort by final bytes", map[string]int{"\xff": 1, "\uFFFE": 2, "\xef": 3}, "{\"\uFFFD\":3,\"\uFFFD\":1,\"\uFFFE\":2}"},
		{"named string keys", map[serHostileString]int{"y": 1, "x": 2}, `{"x":2,"y":1}`},
		{"array", [3]int{1, 2, 3}, `[1,2,3]`},
		{"empty array", [0]int{}, `[]`},
		{"byte array is numbers", [2]byte{1, 2}, `[1,2]`},
		{"empty slice", []int{}, `[]`},
		{"bytes as string", []byte("hé\n"), `"hé\n"`},
		{"empty bytes", []byte{}, `""`},
		{"named bytes", serBytes("x"), `"x"`},
		{"big.Int pointer", bigN, `"9007199254740993n"`},
		{"big.Int value", *bigN, `"9007199254740993n"`},
		{"big.Int negative and zero", []*big.Int{big.NewInt(-5), new(big.Int)}, `["-5n","0n"]`},
		{"big.Int in struct", serBig{N: *big.NewInt(1), P: big.NewInt(2)}, `{"n":"1n","p":"2n"}`},
		{"big.Int of exactly the bit budget", max4096, `"` + max4096.String() + `n"`},
		{"big.Int through an unexported embedded field", &serEmbedsBig{*big.NewInt(5)}, `{"n":"5n"}`},
		{"json.Number is a literal", []json.Number{"12345678901234567890123", "-1.5e+300", ""}, `[12345678901234567890123,-1.5e+300,0]`},
		{"raw message is canonical", json.RawMessage(" {\"b\" : [1, 2.50, 1E5, \"x\\u00e9\\/\"],\n \"a\": {\"z\":null, \"y\":true}} "),
			`{"a":{"y":true,"z":null},"b":[1,2.50,1E5,"xé/"]}`},
		{"raw message keys decode before sorting", json.RawMessage(`{"\u0062":1,"a":2}`), `{"a":2,"b":1}`},
		{"raw scalars", []json.RawMessage{json.RawMessage(`"\ud800"`), json.RawMessage(` -0.0 `), json.RawMessage(`false`)}, "[\"\uFFFD\",-0.0,false]"},
		{"raw in struct", serRaw{Data: json.RawMessage(`[]`), Num: "3"}, `{"data":[],"num":3}`},
		{"pointer to pointer", func() any { p := &seven; return &p }(), `7`},
		{"shared references are emitted twice", []*serNode{shared, shared}, `[{"Name":"shared"},{"Name":"shared"}]`},
		{"list of nodes", &serNode{Name: "a", Next: &serNode{Name: "b"}}, `{"Name":"a","Next":{"Name":"b"}}`},
		{"holder", serHolder{Items: []any{1, "two", 3.5, nil, map[string]any{}}}, `{"items":[1,"two",3.5,null,{}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Serialize(tt.give)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSerializeCycles(t *testing.T) {
	self := &serNode{Name: "loop"}
	self.Next = self
	a, b := &serNode{Name: "a"}, &serNode{Name: "b"}
	a.Next, b.Next = b, a
	m := map[string]any{"k": 1}
	m["self"] = m
	m1, m2 := map[string]any{}, map[string]any{}
	m1["m2"], m2["m1"] = m2, m1
	s := []any{1, nil}
	s[1] = s
	var iface any
	iface = &iface
	holder := &serAnyNode{}
	holder.Self = holder
	inMap := []any{nil}
	inMap[0] = map[string]any{"back": inMap}

	tests := []struct {
		name string
		give any
		want string
	}{
		{"pointer to itself", self, `{"Name":"loop","Next":"[Circular]"}`},
		{"two pointers", a, `{"Name":"a","Next":{"Name":"b","Next":"[Circular]"}}`},
		{"map in itself", m, `{"k":1,"self":"[Circular]"}`},
		{"two maps", m1, `{"m2":{"m1":"[Circular]"}}`},
		{"slice in itself", s, `[1,"[Circular]"]`},
		{"interface pointing at itself", &iface, `"[Circular]"`},
		{"struct through interface", holder, `{"Self":"[Circular]"}`},
		{"slice through map", inMap, `[{"back":"[Circular]"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Serialize(tt.give)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSerializeErrors(t *testing.T) {
	var mu sync.Mutex
	var up unsafe.Pointer
	tests := []struct {
		name string
		give any
		want string // SerializationError.Error()
	}{
		{"time.Time", time.Unix(0, 0).UTC(), `cannot serialize $: opaque struct time.Time`},
		{"time.Time in a map", map[string]any{"when": time.Unix(0, 0)}, `cannot serialize $.when: opaque struct time.Time`},
		{"regexp", regexp.MustCompile("x"), `cannot serialize $: opaque struct regexp.Regexp`},
		{"big.Float", big.NewFloat(1), `cannot serialize $: opaque struct big.Float`},
		{"mutex", &mu, `cannot serialize $: opaque struct sync.Mutex`},
		{"error value", errors.New("boom"), `cannot serialize $: opaque struct errors.errorString`},
		{"unexported field", serUnexported{Visible: 1}, `cannot serialize $: opaque struct toolcore.serUnexported`},
		{"blank field", serBlank{}, `cannot serialize $: opaque struct toolcore.serBlank`},
		{"embedded unexported non-struct", serEmbedsUnexportedNonStruct{}, `cannot serialize $: opaque struct toolcore.serEmbedsUnexportedNonStruct`},
		{"embedded time.Time", serEmbedsTime{}, `cannot serialize $: opaque struct toolcore.serEmbedsTime`},
		{"deep path", serHolder{Items: []any{1, map[string]any{"odd key": []any{make(chan int)}}}}, `cannot serialize $.items[1]["odd key"][0]: unsupported type chan int`},
		{"int keys", map[int]string{1: "a"}, `cannot serialize $: unsupported map type map[int]string (keys must be strings)`},
		{"nil map with int keys", map[int]string(nil), `cannot serialize $: unsupported map type map[int]string (keys must be strings)`},
		{"chan", make(chan int), `cannot serialize $: unsupported type chan int`},
		{"complex", complex64(1), `cannot serialize $: unsupported type complex64`},
		{"unsafe pointer", up, `cannot serialize $: unsupported type unsafe.Pointer`},
		{"invalid UTF-8 bytes", map[string][]byte{"b": {'o', 'k', 0xff}}, `cannot serialize $.b: invalid UTF-8 in []uint8`},
		{"invalid raw message", json.RawMessage(`{"a":}`), `cannot serialize $: invalid json.RawMessage (invalid character '}' looking for beginning of value)`},
		{"empty raw message", json.RawMessage{}, `cannot serialize $: invalid json.RawMessage (unexpected end of JSON input)`},
		{"duplicate raw key", serRaw{Data: json.RawMessage(`{"x":{"a":1,"\u0061":2}}`)}, `cannot serialize $.data.x: duplicate key "a" in json.RawMessage`},
		{"invalid json.Number", json.Number("1e"), `cannot serialize $: invalid json.Number "1e"`},
		{"long key in path", map[string]any{strings.Repeat("k", 100): complex(1, 1)}, `cannot serialize $["` + strings.Repeat("k", 64) + `…"]: unsupported type complex128`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Serialize(tt.give)
			var serr *SerializationError
			require.ErrorAs(t, err, &serr)
			assert.Equal(t, tt.want, err.Error())
			assert.Empty(t, got)
		})
	}
}

func TestSerializationErrorText(t *testing.T) {
	tests := []struct {
		name string
		give SerializationError
		want string
	}{
		{"root", SerializationError{Reason: "unsupported type chan int"}, "cannot serialize $: unsupported type chan int"},
		{"path", SerializationError{Path: "$.items[3].when", Reason: "opaque struct time.Time"}, "cannot serialize $.items[3].when: opaque struct time.Time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.give.Error())
		})
	}
}

// serSum01 is 0.1+0.2 in float64 arithmetic (constants would be exact).
func serSum01() float64 {
	a, b := 0.1, 0.2
	return a + b
}

func TestSerializeFloats(t *testing.T) {
	// Expected values are what JSON.stringify (Number.prototype.toString) prints.
	tests := []struct {
		give any
		want string
	}{
		{0.0, "0"},
		{math.Copysign(0, -1), "0"},
		{1.0, "1"},
		{-2.5, "-2.5"},
		{serSum01(), "0.30000000000000004"},
		{1e20, "100000000000000000000"},
		{123456789012345680000.0, "123456789012345680000"},
		{math.Nextafter(1e21, 0), "999999999999999900000"},
		{1e21, "1e+21"},
		{1.5e300, "1.5e+300"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{1e-6, "0.000001"},
		{1.234e-6, "0.000001234"},
		{math.Nextafter(1e-6, 0), "9.999999999999997e-7"},
		{1e-7, "1e-7"},
		{-1.5e-7, "-1.5e-7"},
		{1.23e-10, "1.23e-10"},
		{5e-324, "5e-324"},
		{float64(1 << 53), "9007199254740992"},
		{math.NaN(), "null"},
		{math.Inf(1), "null"},
		{math.Inf(-1), "null"},
		{float32(0.1), "0.1"},
		{float32(1e21), "1e+21"},
		{float32(1.5e-7), "1.5e-7"},
		{float32(math.MaxFloat32), "3.4028235e+38"},
		{float32(math.Inf(1)), "null"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got, err := Serialize(tt.give)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// serDeepChain returns a linked list n nodes deep.
func serDeepChain(n int) *serNode {
	var head *serNode
	for range n {
		head = &serNode{Name: "n", Next: head}
	}
	return head
}

// serDeepSlices returns n nested []any.
func serDeepSlices(n int) any {
	var v any = []any{}
	for range n {
		v = []any{v}
	}
	return v
}

// serPointerChain returns n pointers to interfaces with no container between them.
func serPointerChain(n int) any {
	var v any = 1
	for range n {
		p := new(any)
		*p = v
		v = p
	}
	return v
}

// serBigMap returns n entries "key-0000000": 0, ... (keys sort like their values).
func serBigMap(n int) map[string]int {
	m := make(map[string]int, n)
	buf := make([]byte, 0, 16)
	for i := range n {
		buf = strconv.AppendInt(append(buf[:0], "key-"...), int64(10_000_000+i), 10)
		buf[4] = '-'
		m["key"+string(buf[4:])] = i
	}
	return m
}

// serMillionMap is built once: tests and benchmarks share it.
var serMillionMap = sync.OnceValue(func() map[string]int { return serBigMap(1_000_000) })

func serInts(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func serJoinInts(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, i)
	}
	return b.String()
}

// serRunes cuts s after n code points.
func serRunes(s string, n int) string {
	return string([]rune(s)[:n])
}

func TestSerializeBudgets(t *testing.T) {
	keep := MaxContentCodePoints - len(TruncationMarker)
	type omitting struct {
		A int `json:",omitempty"`
		B int `json:",omitempty"`
	}
	tests := []struct {
		name   string
		give   func() any
		want   string
		budget serBudget
	}{
		{"8,000,000-character string", func() any { return strings.Repeat("x", 8_000_000) },
			`"` + strings.Repeat("x", keep-1) + TruncationMarker, budgetChars},
		{"8,000,000 bytes, invalid beyond the budget", func() any { return append([]byte(strings.Repeat("y", 8_000_000)), 0xff) },
			`"` + strings.Repeat("y", keep-1) + TruncationMarker, budgetChars},
		{"1,000,000-entry map", func() any { return serMillionMap() },
			`{` + TruncationMarker, budgetEntries},
		{"map one entry over the budget", func() any { return serBigMap(MaxEntries + 1) },
			`{` + TruncationMarker, budgetEntries},
		{"map within entries, beyond nodes", func() any { return serBigMap(200) },
			`{` + serMapPrefix(MaxNodes-1) + TruncationMarker, budgetNodes},
		{"second map beyond the entries left", func() any { return []any{serBigMap(100), map[string]int{"a": 1, "b": 2}, serBigMap(200)} },
			`[{` + serMapPrefix(100) + `},{"a":1,"b":2},{` + TruncationMarker, budgetEntries},
		{"100,000-deep struct chain", func() any { return serDeepChain(100_000) },
			strings.Repeat(`{"Name":"n","Next":`, MaxDepth) + TruncationMarker, budgetDepth},
		{"100,000-deep slices", func() any { return serDeepSlices(100_000) },
			strings.Repeat(`[`, MaxDepth) + TruncationMarker, budgetDepth},
		{"100,000 pointers without containers", func() any { return serPointerChain(100_000) },
			TruncationMarker, budgetDepth},
		{"32 nested slices fit", func() any { return serDeepSlices(MaxDepth - 1) },
			strings.Repeat(`[`, MaxDepth) + strings.Repeat(`]`, MaxDepth), budgetNone},
		{"1,000,000-element slice", func() any { return serInts(1_000_000) },
			`[` + serJoinInts(MaxNodes-1) + TruncationMarker, budgetNodes},
		{"127 elements fit the nodes", func() any { return serInts(MaxNodes - 1) },
			`[` + serJoinInts(MaxNodes-1) + `]`, budgetNone},
		{"omitted fields are visited", func() any { return make([]omitting, 200) },
			`[` + strings.Repeat(`{},`, 85) + `{` + TruncationMarker, budgetEntries},
		{"oversized big.Int at the top", func() any { return new(big.Int).Lsh(big.NewInt(1), MaxBigIntBits) },
			TruncationMarker, budgetBigInt},
		{"oversized big.Int in a map", func() any { return map[string]any{"a": 1, "n": new(big.Int).Lsh(big.NewInt(-1), 1_000_000)} },
			`{"a":1,"n":` + TruncationMarker, budgetBigInt},
		{"big raw message", func() any { return json.RawMessage(`"` + strings.Repeat("r", MaxRawMessageBytes) + `"`) },
			TruncationMarker, budgetRawMessage},
		{"raw object beyond the entries", func() any { return json.RawMessage(`{` + strings.Repeat(`"k":1,`, MaxEntries) + `"z":2}`) },
			`{` + TruncationMarker, budgetEntries},
		{"deep raw message", func() any { return json.RawMessage(strings.Repeat("[", 1000) + strings.Repeat("]", 1000)) },
			strings.Repeat(`[`, MaxDepth) + TruncationMarker, budgetDepth},
		{"wide raw array", func() any { return json.RawMessage(`[` + serJoinInts(1000) + `]`) },
			`[` + serJoinInts(MaxNodes-1) + TruncationMarker, budgetNodes},
		{"8,000,000-character key", func() any { return map[string]int{strings.Repeat("k", 8_000_000): 1} },
			`{"` + strings.Repeat("k", keep-2) + TruncationMarker, budgetContent},
		{"content of exactly the cap", func() any { return strings.Repeat("e", MaxContentCodePoints-2) },
			`"` + strings.Repeat("e", MaxContentCodePoints-2) + `"`, budgetNone},
		{"content one past the cap", func() any { return strings.Repeat("é", MaxContentCodePoints-1) },
			`"` + strings.Repeat("é", keep-1) + TruncationMarker, budgetContent},
		{"escapes fill the cap", func() any { return strings.Repeat("\x01", 1000) },
			serRunes(`"`+strings.Repeat(`\u0001`, 1000), keep) + TruncationMarker, budgetContent},
		{"big integers fill the cap", func() any {
			x := new(big.Int).Lsh(big.NewInt(1), MaxBigIntBits-1)
			return []*big.Int{x, x, x, x, x}
		}, serRunes(`["`+strings.Repeat(new(big.Int).Lsh(big.NewInt(1), MaxBigIntBits-1).String()+`n","`, 4), keep) + TruncationMarker, budgetContent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.give()
			got, stopped, err := serialize(v)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.budget, stopped)
			assert.LessOrEqual(t, utf8.RuneCountInString(got), MaxContentCodePoints)
			assert.LessOrEqual(t, strings.Count(got, TruncationMarker), 1)
			public, err := Serialize(v)
			require.NoError(t, err)
			assert.Equal(t, got, public)
		})
	}
}

// serMapPrefix is the first n entries of serBigMap, sorted.
func serMapPrefix(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"key-%07d":%d`, i, i)
	}
	return b.String()
}

func TestSerializeIsDeterministic(t *testing.T) {
	m := map[string]any{}
	for i := range 200 {
		m[fmt.Sprintf("k%d", i*7919%1000)] = map[string]int{"x": i, "y": -i}
	}
	want, err := Serialize(m)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(want, TruncationMarker), "the fixture must exercise truncation")

	var wg sync.WaitGroup
	results := make([]string, 16)
	for g := range results {
		wg.Go(func() {
			for range 20 {
				got, err := Serialize(m)
				if err != nil || got != want {
					results[g] = got
					return
				}
			}
			results[g] = want
		})
	}
	wg.Wait()
	for g, got := range results {
		assert.Equal(t, want, got, "goroutine %d", g)
	}
}

func TestCapContent(t *testing.T) {
	keep := MaxContentCodePoints - len(TruncationMarker)
	tests := []struct {
		name string
		give string
		want string
	}{
		{"empty", "", ""},
		{"short", `{"sum":42}`, `{"sum":42}`},
		{"exactly the cap", strings.Repeat("a", MaxContentCodePoints), strings.Repeat("a", MaxContentCodePoints)},
		{"exactly the cap in multibyte code points", strings.Repeat("é", MaxContentCodePoints), strings.Repeat("é", MaxContentCodePoints)},
		{"one past the cap", strings.Repeat("é", MaxContentCodePoints+1), strings.Repeat("é", keep) + TruncationMarker},
		{"8,000,000 bytes", strings.Repeat("b", 8_000_000), strings.Repeat("b", keep) + TruncationMarker},
		{"already capped", strings.Repeat("c", keep) + TruncationMarker, strings.Repeat("c", keep) + TruncationMarker},
		{"marker only", TruncationMarker, TruncationMarker},
		{"no second marker at the cut", strings.Repeat("d", keep-len(TruncationMarker)) + TruncationMarker + strings.Repeat("d", 100),
			strings.Repeat("d", keep-len(TruncationMarker)) + TruncationMarker},
		{"invalid UTF-8 kept short", "a\xffb", "a\uFFFDb"},
		{"invalid UTF-8 counted per byte", strings.Repeat("\xff", MaxContentCodePoints+1), strings.Repeat("\uFFFD", keep) + TruncationMarker},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := capContent(tt.give)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, got, capContent(got), "idempotent")
			assert.LessOrEqual(t, utf8.RuneCountInString(got), MaxContentCodePoints)
			assert.True(t, utf8.ValidString(got))
		})
	}
}
