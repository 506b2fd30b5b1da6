package toolcore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fuzz targets run their seed corpus (f.Add and testdata/fuzz/FuzzSerialize*) in plain
// `go test`; explore with e.g. `go test -run '^$' -fuzz '^FuzzSerialize$' -fuzztime 60s ./toolcore/`.

// Opcodes of serFuzzProgram, one byte each (modulo serOpCount), followed by their operands.
const (
	serOpInt     = iota // 8 bytes: int64
	serOpFloat          // 8 bytes: float64 bits
	serOpString         // n, n bytes (any bytes, invalid UTF-8 included)
	serOpBool           // 1 byte
	serOpNil            //
	serOpSlice          // k: []any of the top k values
	serOpMap            // k, then k times (n, n key bytes): map[string]any of the top k values
	serOpStruct         // n, n bytes: serFuzzStruct{A: pop, B: pop, C: string}
	serOpPointer        // *any to the top value
	serOpBigInt         // n, 4n bytes: a big.Int, negative when n is odd
	serOpBytes          // n, n bytes: []byte
	serOpRaw            // n, n bytes: json.RawMessage
	serOpCycle          // kind: a map, slice, struct or interface that contains itself
	serOpFunc           //
	serOpNumber         // n, n bytes: json.Number
	serOpBad            // kind: an opaque or unsupported value
	serOpRepeat         // k: the top string repeated 1000k times
	serOpWide           // k: a slice of 1000k copies of the top value
	serOpDeep           // k: the top value nested in 10k slices
	serOpDup            // the top value pushed again (a shared reference)
	serOpCount
)

type serFuzzStruct struct {
	A any    `json:"a"`
	B any    `json:"b,omitempty"`
	C string `json:",omitempty"`
}

// serFuzzProgram builds a value from data, deterministically: building twice gives equal
// values with independent maps (whose iteration orders differ).
type serFuzzProgram struct {
	data  []byte
	pos   int
	stack []any
	room  int // bytes that Repeat, Wide and Deep may still allocate, roughly
}

func (p *serFuzzProgram) next() byte {
	if p.pos >= len(p.data) {
		return 0
	}
	p.pos++
	return p.data[p.pos-1]
}

func (p *serFuzzProgram) take(n int) []byte {
	n = min(n, len(p.data)-p.pos)
	b := p.data[p.pos : p.pos+n]
	p.pos += n
	return b
}

func (p *serFuzzProgram) uint64() uint64 {
	var b [8]byte
	copy(b[:], p.take(8))
	return binary.LittleEndian.Uint64(b[:])
}

func (p *serFuzzProgram) push(v any) { p.stack = append(p.stack, v) }

func (p *serFuzzProgram) pop() any {
	if len(p.stack) == 0 {
		return nil
	}
	v := p.stack[len(p.stack)-1]
	p.stack = p.stack[:len(p.stack)-1]
	return v
}

func (p *serFuzzProgram) top() any {
	if len(p.stack) == 0 {
		return "x"
	}
	return p.stack[len(p.stack)-1]
}

func serFuzzValue(data []byte) any {
	p := &serFuzzProgram{data: data, room: 1 << 21}
	for steps := 0; p.pos < len(p.data) && steps < 256; steps++ {
		switch p.next() % serOpCount {
		case serOpInt:
			p.push(int64(p.uint64()))
		case serOpFloat:
			p.push(math.Float64frombits(p.uint64()))
		case serOpString:
			p.push(string(p.take(int(p.next()))))
		case serOpBool:
			p.push(p.next()%2 == 1)
		case serOpNil:
			p.push(nil)
		case serOpSlice:
			s := make([]any, p.next()%8)
			for i := len(s) - 1; i >= 0; i-- {
				s[i] = p.pop()
			}
			p.push(s)
		case serOpMap:
			k := int(p.next() % 8)
			m := make(map[string]any, k)
			for range k {
				m[string(p.take(int(p.next()%16)))] = p.pop()
			}
			p.push(m)
		case serOpStruct:
			p.push(&serFuzzStruct{A: p.pop(), B: p.pop(), C: string(p.take(int(p.next())))})
		case serOpPointer:
			v := new(any)
			*v = p.pop()
			p.push(v)
		case serOpBigInt:
			n := int(p.next())
			x := new(big.Int).SetBytes(p.take(4 * n))
			if n%2 == 1 {
				x.Neg(x)
			}
			p.push(x)
		case serOpBytes:
			p.push(bytes.Clone(p.take(int(p.next()))))
		case serOpRaw:
			p.push(json.RawMessage(bytes.Clone(p.take(int(p.next())))))
		case serOpCycle:
			switch v := p.pop(); p.next() % 4 {
			case 0:
				m := map[string]any{"v": v}
				m["self"] = m
				p.push(m)
			case 1:
				s := []any{v, nil}
				s[1] = s
				p.push(s)
			case 2:
				st := &serFuzzStruct{A: v}
				st.B = st
				p.push(st)
			default:
				var i any
				i = &i
				p.push([]any{v, i})
			}
		case serOpFunc:
			p.push(func() {})
		case serOpNumber:
			p.push(json.Number(p.take(int(p.next()))))
		case serOpBad:
			bad := []any{time.Unix(0, 0), make(chan int), complex(1, 2), map[int]int{1: 1}, serUnexported{}, []byte{0xff}}
			p.push(bad[int(p.next())%len(bad)])
		case serOpRepeat:
			s, _ := p.top().(string)
			if s == "" {
				s = "x"
			}
			n := min(1000*int(p.next()), p.room/len(s))
			p.room -= n * len(s)
			p.push(strings.Repeat(s, n))
		case serOpWide:
			v := p.top()
			s := make([]any, min(1000*int(p.next()), p.room/16))
			p.room -= 16 * len(s)
			for i := range s {
				s[i] = v
			}
			p.push(s)
		case serOpDeep:
			v := p.pop()
			n := min(10*int(p.next()), p.room/64)
			p.room -= 64 * n
			for range n {
				v = []any{v}
			}
			p.push(v)
		case serOpDup:
			p.push(p.top())
		}
	}
	if len(p.stack) == 1 {
		return p.stack[0]
	}
	return p.stack
}

// serCheckContent asserts what holds for every successful content.
func serCheckContent(t *testing.T, content string) {
	t.Helper()
	require.True(t, utf8.ValidString(content), "valid UTF-8")
	require.LessOrEqual(t, utf8.RuneCountInString(content), MaxContentCodePoints)
	body, truncated := strings.CutSuffix(content, TruncationMarker)
	require.NotContains(t, body, "\n", "the marker appears only once, at the end")
	if !truncated {
		require.True(t, json.Valid([]byte(content)), "untruncated content is JSON: %q", content)
	}
}

func FuzzSerialize(f *testing.F) {
	for _, seed := range serFuzzSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, program []byte) {
		content, err := Serialize(serFuzzValue(program))
		again, errAgain := Serialize(serFuzzValue(program))
		require.Equal(t, content, again, "deterministic")
		if err != nil {
			var serr *SerializationError
			require.ErrorAs(t, err, &serr)
			require.NotEmpty(t, serr.Reason)
			require.True(t, strings.HasPrefix(serr.Path, "$"))
			require.Empty(t, content)
			require.EqualError(t, errAgain, err.Error(), "deterministic")
			return
		}
		require.NoError(t, errAgain)
		serCheckContent(t, content)
	})
}

// serFuzzSeeds are programs that reach every opcode and budget.
func serFuzzSeeds() [][]byte {
	le := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	op := func(code int, operands ...byte) []byte { return append([]byte{byte(code)}, operands...) }
	str := func(s string) []byte { return append(op(serOpString, byte(len(s))), s...) }
	return [][]byte{
		{},
		cat(op(serOpInt), le(42), op(serOpBool, 1), op(serOpMap, 2, 3), []byte("sum"), []byte{5}, []byte("exact")),
		cat(op(serOpFloat), le(math.Float64bits(1.5e-7)), op(serOpFloat), le(math.Float64bits(math.NaN())), op(serOpSlice, 2)),
		cat(str("a\xff\"\n"), op(serOpRepeat, 255), op(serOpSlice, 2)),
		cat(op(serOpNil), op(serOpCycle, 0), op(serOpNil), op(serOpCycle, 1), op(serOpNil), op(serOpCycle, 2), op(serOpNil), op(serOpCycle, 3), op(serOpSlice, 4)),
		cat(op(serOpBigInt, 2), le(math.MaxUint64), op(serOpBigInt, 129), bytes.Repeat([]byte{1}, 516)),
		cat(op(serOpBytes, 3), []byte("ok\xff"), op(serOpBytes, 2), []byte("ok"), op(serOpSlice, 1)),
		cat(op(serOpRaw, 19), []byte(` {"b":[1,2],"a":{}}`), op(serOpNumber, 4), []byte("1e10"), op(serOpSlice, 2)),
		cat(op(serOpRaw, 13), []byte(`{"a":1,"a":2}`)),
		cat(op(serOpFunc), op(serOpPointer), op(serOpDup), op(serOpSlice, 2)),
		cat(op(serOpInt), le(7), op(serOpWide, 255)),
		cat(op(serOpInt), le(7), op(serOpDeep, 255)),
		cat(op(serOpBad, 0)), cat(op(serOpBad, 1)), cat(op(serOpBad, 2)), cat(op(serOpBad, 3)), cat(op(serOpBad, 4)), cat(op(serOpBad, 5)),
		cat(str("k"), op(serOpInt), le(1), op(serOpStruct, 3), []byte("abc")),
		cat(op(serOpInt), le(1), op(serOpMap, 1, 0), op(serOpDup), op(serOpWide, 1), op(serOpMap, 1, 1, 'x')),
	}
}

func FuzzSerializeRawMessage(f *testing.F) {
	for _, seed := range []string{
		`{"sum":42,"exact":true}`, ` [1, 2.50, -0, 1E400, "\u00e9\ud800"] `, `{"a":{"c":[],"b":null}}`,
		`{"a":1,"a":2}`, `{"a":`, ``, `"` + strings.Repeat("s", 5000) + `"`, strings.Repeat("[", 40) + strings.Repeat("]", 40),
		`{"\u0062":1,"b ":2,"a\"":3}`, "\"\xff\"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		content, err := Serialize(json.RawMessage(raw))
		switch {
		case len(raw) > MaxRawMessageBytes:
			require.NoError(t, err)
			require.Equal(t, TruncationMarker, content)
			return
		case !json.Valid(raw):
			var serr *SerializationError
			require.ErrorAs(t, err, &serr)
			require.Contains(t, serr.Reason, "invalid json.RawMessage")
			return
		case err != nil:
			require.Contains(t, err.Error(), "duplicate key")
			return
		}
		serCheckContent(t, content)
		if strings.HasSuffix(content, TruncationMarker) {
			return
		}
		// Untruncated, the content means what raw means, and is its own canonical form.
		var want, got any
		require.NoError(t, serDecode(raw, &want))
		require.NoError(t, serDecode([]byte(content), &got))
		assert.Equal(t, want, got)
		again, err := Serialize(json.RawMessage(content))
		require.NoError(t, err)
		assert.Equal(t, content, again)
	})
}

func serDecode(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	return d.Decode(v)
}

func FuzzSerializeString(f *testing.F) {
	for _, seed := range []string{"", "plain", "q\"b\\\n\t\x00\x7f", "\xff\xfe\xed\xa0\x80", "\u2028<&>", strings.Repeat("é", 5000)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		content, err := Serialize(s)
		require.NoError(t, err)
		serCheckContent(t, content)
		if strings.HasSuffix(content, TruncationMarker) {
			require.Greater(t, len(s), MaxContentCodePoints/6-2, "only a long string is truncated")
			return
		}
		var got string
		require.NoError(t, json.Unmarshal([]byte(content), &got))
		assert.Equal(t, string([]rune(s)), got, "each invalid byte is one U+FFFD")
	})
}

func FuzzSerializeCapContent(f *testing.F) {
	for _, seed := range []string{"", "ok", TruncationMarker, strings.Repeat("a", MaxContentCodePoints), strings.Repeat("é", MaxContentCodePoints+1),
		strings.Repeat("\xff", MaxContentCodePoints+1), strings.Repeat("m"+TruncationMarker, 300)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := capContent(s)
		require.True(t, utf8.ValidString(got))
		require.LessOrEqual(t, utf8.RuneCountInString(got), MaxContentCodePoints)
		require.Equal(t, got, capContent(got), "idempotent")
		if utf8.RuneCountInString(s) <= MaxContentCodePoints {
			require.Equal(t, string([]rune(s)), got, "content within the cap is kept")
			return
		}
		require.True(t, strings.HasSuffix(got, TruncationMarker))
		require.False(t, strings.HasSuffix(strings.TrimSuffix(got, TruncationMarker), TruncationMarker), "one marker at the end")
		require.True(t, strings.HasPrefix(string([]rune(s)), strings.TrimSuffix(got, TruncationMarker)))
	})
}
