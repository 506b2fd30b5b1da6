package toolcore

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Serialization budgets (contract section 4).
const (
	MaxContentCodePoints = 4096
	TruncationMarker     = "\n[Tool output truncated]"
	MaxDepth             = 32
	MaxNodes             = 128
	MaxEntries           = 256
	MaxStringChars       = 4096
	MaxBigIntBits        = 4096
	// MaxRawMessageBytes bounds a json.RawMessage that Serialize parses. A longer one exhausts
	// the budget where it starts: checking its validity and sorting its keys would cost work in
	// proportion to its size.
	MaxRawMessageBytes = 64 << 10
)

// serMarkerRunes is the length of TruncationMarker in code points (it is ASCII).
const serMarkerRunes = len(TruncationMarker)

// SerializationError says why a value cannot be serialized; it becomes a
// TOOL_OUTPUT_SERIALIZATION_FAILED result.
type SerializationError struct {
	// Path locates the value, e.g. "$.items[3].when".
	Path string
	// Reason, e.g. "opaque struct time.Time".
	Reason string
}

// Error returns "cannot serialize <path>: <reason>", e.g.
// `cannot serialize $.when: opaque struct time.Time`. Both parts are deterministic: the path
// uses JSON keys (cut at 64 code points) and indexes, the reason Go type names.
func (e *SerializationError) Error() string {
	path := e.Path
	if path == "" {
		path = "$"
	}
	return "cannot serialize " + path + ": " + e.Reason
}

// Serialize renders v as bounded deterministic JSON content, capped at MaxContentCodePoints
// including at most one TruncationMarker. It never calls user code. It is safe for concurrent
// use; v must not be mutated while it runs.
//
// # Values
//
// Serialize reads v by reflection only: no method of any value is called (MarshalJSON,
// MarshalText, String, Error, IsZero), so nothing a tool returns can run code, block or panic
// here. The only methods called are those of math/big.Int, recognized by exact type.
//
//   - nil interfaces, pointers, maps, slices and funcs: null (as encoding/json; a nil func is no
//     function). Other funcs: "[Function]".
//   - bool; integers of every size exactly, uintptr included; float32 and float64 in the
//     shortest form of ECMAScript's Number.prototype.toString (what JSON.stringify prints:
//     1e+21, 1.5e-7, -0 as 0; float32 uses its own shortest digits, as encoding/json does);
//     NaN and ±Inf as null.
//   - strings JSON-quoted the way JSON.stringify quotes them (only ", \ and control characters
//     escaped; no HTML escaping), each invalid UTF-8 byte replaced by U+FFFD.
//   - json.Number: the number literal, exactly (empty is 0, a malformed one fails).
//   - big.Int and *big.Int: the quoted decimal with an n suffix ("9007199254740993n") while the
//     magnitude is at most MaxBigIntBits bits; a larger one exhausts the budget.
//   - maps with keys of string kind, and structs whose fields are all exported: objects, keys
//     sorted by the bytes of the final (quoted-and-replaced) key, ties of invalid UTF-8 keys
//     broken by their raw bytes. Struct fields follow encoding/json: json tag names (invalid ones
//     ignored), "-", omitempty (with encoding/json's emptiness), omitzero (reflect's zero test,
//     never an IsZero method); untagged embedded structs and pointers to structs are promoted
//     with Go's shadowing rules, ambiguous names dropped; the ",string" option is ignored.
//     A struct with an unexported field anywhere in its promoted set (also a blank "_" field, or
//     an embedded unexported non-struct) is opaque and fails, even when the field is tagged "-":
//     time.Time, regexp.Regexp, big.Float, sync types, error values.
//   - slices and arrays: arrays; []byte (any slice of a uint8-kind type) holding valid UTF-8 is a
//     string, invalid UTF-8 in it fails; json.RawMessage is parsed and re-emitted canonically:
//     no insignificant space, keys sorted, strings re-quoted, number literals kept as sent. An
//     invalid one, or an object in it with a duplicate key, fails.
//   - maps with other key kinds, channels, complex numbers and unsafe pointers fail.
//   - a pointer, map or non-empty slice that is already on the path from the root to the value
//     is "[Circular]". Detection is by path, not by a seen-set: a value shared by two branches is
//     emitted twice (the budgets bound the cost of sharing).
//
// # Budgets
//
// Every call starts with fresh budgets and charges them as it walks, in output order:
//
//   - nodes (MaxNodes): one per emitted value, charged before its separator and key.
//   - entries (MaxEntries): one per slice or array element and per struct field visited
//     (omitted fields too); a map or raw JSON object is charged all its entries at once
//     when it is opened, see below.
//   - depth (MaxDepth): one per object or array on the path, and one per pointer whose target
//     is itself a pointer or an interface, so chains of indirections without containers are
//     bounded too (a plain *T costs no more than T).
//   - characters (MaxStringChars): source code points of strings, map keys and field names,
//     shared by all of them; a []byte or json.RawMessage string counts its decoded characters.
//   - big.Int magnitude (MaxBigIntBits) per integer, and MaxRawMessageBytes per raw message.
//   - the content cap: once the output passes MaxContentCodePoints, emission stops, since all
//     of it beyond the cap would be cut anyway.
//
// A budget that runs out stops emission right there: the content is what was emitted so far
// (possibly an unclosed string or object) followed by TruncationMarker, cut so that the whole
// is at most MaxContentCodePoints code points, and Serialize still succeeds. A value that would
// fail beyond the point where a budget ran out is never reached, so it does not fail: the
// verdict depends only on what was read. In particular a []byte is checked for UTF-8 only as
// far as its characters are emitted. The walk never reads beyond its budgets, so its work is
// bounded by them whatever the size of v: a string of 8 million characters, a slice of a
// million elements or a chain 100,000 deep cost what their first few thousand characters,
// 256 elements or 32 levels cost.
//
// # Large maps and determinism
//
// Sorted keys and bounded work conflict for maps: Go's map iteration order is random, and the
// first k keys in sorted order are a function of all keys, so any deterministic choice of
// a subset of a map's entries must read every key. Serialize therefore charges the entries
// budget for the whole map when it opens it, before reading any key (reading and sorting are
// visits): a map with more entries than the budget has left stops emission right after its
// "{", at O(1) cost; a smaller one is read (at most MaxEntries keys in all), sorted and
// emitted. The cost is that a map of, say, 300 entries shows none of them, where a slice of
// 300 shows its first elements; the alternative, a bounded heap over all n keys, gives the
// first keys in order but costs O(n) per call (a reflective pass with a 256-key heap over a
// million entries measured over a second on the shared development machine, where this rule
// costs about 3 µs), which the contract forbids. Raw JSON objects follow the same rule. Key comparisons read at most
// 4*MaxStringChars+4 bytes of each key: keys equal that far exceed the character budget,
// so whichever comes first, the same prefix is emitted before emission stops.
func Serialize(v any) (string, error) {
	content, _, err := serialize(v)
	return content, err
}

// serBudget names what stopped an emission; budgetNone means nothing did.
type serBudget uint8

const (
	budgetNone serBudget = iota
	budgetDepth
	budgetNodes
	budgetEntries
	budgetChars
	budgetBigInt
	budgetRawMessage
	budgetContent
)

func (b serBudget) String() string {
	switch b {
	case budgetNone:
		return "none"
	case budgetDepth:
		return "depth"
	case budgetNodes:
		return "nodes"
	case budgetEntries:
		return "entries"
	case budgetChars:
		return "characters"
	case budgetBigInt:
		return "big.Int bits"
	case budgetRawMessage:
		return "json.RawMessage bytes"
	case budgetContent:
		return "content code points"
	}
	return "serBudget(" + strconv.Itoa(int(b)) + ")"
}

// serFailure carries a *SerializationError through the internal panic; serBudget values are the
// other panic the walk raises. Anything else is re-panicked.
type serFailure struct{ err *SerializationError }

// serialize is Serialize that also reports which budget stopped the emission.
func serialize(v any) (content string, stopped serBudget, err error) {
	e := serEncoderPool.Get().(*serEncoder)
	defer e.release()
	stopped, err = e.run(v)
	if err != nil {
		// The walk is deterministic: walking again with tracing fails at the same value and
		// names its path (unless v changed meanwhile, a data race of the caller's).
		e.reset()
		e.trace = true
		if _, traced := e.run(v); traced != nil {
			err = traced
		}
		return "", budgetNone, err
	}
	return e.content(stopped), stopped, nil
}

// capContent caps s at MaxContentCodePoints the way Serialize caps its content: s is kept
// as it is when it fits (invalid UTF-8 bytes become U+FFFD), otherwise its first
// MaxContentCodePoints-len(TruncationMarker) code points are kept, trailing markers in them
// dropped, and one TruncationMarker appended. It reads at most MaxContentCodePoints+1 code points
// of s, and capContent(capContent(s)) == capContent(s).
func capContent(s string) string {
	valid := true
	n, keep := 0, -1
	for i := 0; i < len(s); n++ {
		if n == MaxContentCodePoints-serMarkerRunes {
			keep = i
		}
		if n == MaxContentCodePoints {
			prefix := serValidUTF8(s[:keep])
			for strings.HasSuffix(prefix, TruncationMarker) {
				prefix = prefix[:len(prefix)-len(TruncationMarker)]
			}
			return prefix + TruncationMarker
		}
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			valid = false
		}
		i += size
	}
	if valid {
		return s
	}
	return serValidUTF8(s)
}

// serValidUTF8 replaces each invalid UTF-8 byte of s with U+FFFD (strings.ToValidUTF8 would
// replace a run of them with one), keeping the count of code points.
func serValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// serEncoder is the state of one Serialize call. Encoders are pooled; release clears every
// reference to the caller's data.
type serEncoder struct {
	buf     []byte
	extra   int // bytes of buf beyond one per code point
	depth   int
	nodes   int // budget left
	entries int // budget left
	chars   int // budget left
	refs    []serRef
	path    []serPathSeg
	kv      []serMapEntry  // entries of the maps being emitted, nested maps stacked
	members []serRawMember // members of the raw JSON objects being emitted, stacked

	structType reflect.Type // the struct type last emitted, and its serStruct
	structInfo *structFields

	trace bool // keep path
}

// serRef identifies a pointer, map or slice on the current path. Pointers and slices include
// their element type, since a struct and its first field share an address.
type serRef struct {
	kind reflect.Kind
	ptr  uintptr
	len  int
	elem reflect.Type
}

// serPathSeg is one step of the path to the current value: a key, or an index when index >= 0.
type serPathSeg struct {
	key   string
	index int
}

type serMapEntry struct {
	key string
	val reflect.Value
}

type serRawMember struct {
	key   string
	start int
}

var serEncoderPool = sync.Pool{New: func() any { return new(serEncoder) }}

func (e *serEncoder) release() {
	e.reset()
	serEncoderPool.Put(e)
}

// reset drops every reference to the caller's data and the state of the last walk.
func (e *serEncoder) reset() {
	// Emitters clear the kv and members they pop; a stop leaves some in use. Path and refs
	// are short (bounded by the depth), popping does not clear them.
	clear(e.kv)
	clear(e.members)
	clear(e.path[:cap(e.path)])
	clear(e.refs[:cap(e.refs)])
	*e = serEncoder{
		buf: e.buf[:0], refs: e.refs[:0], path: e.path[:0], kv: e.kv[:0], members: e.members[:0],
		structType: e.structType, structInfo: e.structInfo,
	}
}

// run walks v; it is the only place that recovers, and it re-panics what it did not raise.
func (e *serEncoder) run(v any) (stopped serBudget, err error) {
	defer func() {
		if r := recover(); r != nil {
			switch x := r.(type) {
			case serBudget:
				stopped = x
			case serFailure:
				err = x.err
			default:
				panic(r)
			}
		}
	}()
	e.nodes, e.entries, e.chars = MaxNodes, MaxEntries, MaxStringChars
	e.node()
	e.value(reflect.ValueOf(v))
	return budgetNone, nil
}

// content assembles the final content from what was emitted.
func (e *serEncoder) content(stopped serBudget) string {
	if stopped == budgetNone && e.runes() <= MaxContentCodePoints {
		return string(e.buf)
	}
	b := e.buf
	if keep := MaxContentCodePoints - serMarkerRunes; len(b) > keep {
		n, i := 0, 0
		for ; i < len(b) && n < keep; n++ {
			_, size := utf8.DecodeRune(b[i:])
			i += size
		}
		b = b[:i]
	}
	return string(b) + TruncationMarker
}

func (e *serEncoder) runes() int { return len(e.buf) - e.extra }

func (e *serEncoder) stop(b serBudget) { panic(b) }

// push and pop keep the path to the current value, only while tracing: a failed walk is
// repeated with tracing on to name the path, so successful walks do not pay for it.
func (e *serEncoder) push(seg serPathSeg) {
	if e.trace {
		e.path = append(e.path, seg)
	}
}

func (e *serEncoder) pop() {
	if e.trace {
		e.path = e.path[:len(e.path)-1]
	}
}

func (e *serEncoder) fail(reason string) {
	panic(serFailure{&SerializationError{Path: serFormatPath(e.path), Reason: reason}})
}

func (e *serEncoder) node() {
	if e.nodes == 0 {
		e.stop(budgetNodes)
	}
	e.nodes--
}

func (e *serEncoder) entry() {
	if e.entries == 0 {
		e.stop(budgetEntries)
	}
	e.entries--
}

func (e *serEncoder) enter() {
	e.depth++
	if e.depth > MaxDepth {
		e.stop(budgetDepth)
	}
}

// checkCap stops the emission once the output is past the content cap.
func (e *serEncoder) checkCap() {
	if len(e.buf)-e.extra > MaxContentCodePoints {
		e.stop(budgetContent)
	}
}

// write appends ASCII text.
func (e *serEncoder) write(s string) {
	e.buf = append(e.buf, s...)
	e.checkCap()
}

func (e *serEncoder) writeByte(c byte) {
	e.buf = append(e.buf, c)
	e.checkCap()
}

func (e *serEncoder) onPath(r serRef) bool {
	return slices.Contains(e.refs, r)
}

var (
	serBigIntType     = reflect.TypeFor[big.Int]()
	serRawMessageType = reflect.TypeFor[json.RawMessage]()
	serNumberType     = reflect.TypeFor[json.Number]()
)

// value emits v; its node has been charged by the caller.
func (e *serEncoder) value(v reflect.Value) {
	switch v.Kind() {
	case reflect.Invalid, reflect.Pointer, reflect.Interface, reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
		depth, refs := e.depth, len(e.refs)
		e.indirect(v)
		e.depth, e.refs = depth, e.refs[:refs]
	default:
		e.concrete(v) // a scalar: no depth, no refs
	}
}

// indirect follows interfaces and pointers to the concrete value and emits it.
func (e *serEncoder) indirect(v reflect.Value) {
	for {
		switch v.Kind() {
		case reflect.Invalid:
			e.write("null")
			return
		case reflect.Interface:
			if v.IsNil() {
				e.write("null")
				return
			}
			v = v.Elem()
			continue
		case reflect.Pointer:
			if v.IsNil() {
				e.write("null")
				return
			}
			r := serRef{kind: reflect.Pointer, ptr: v.Pointer(), elem: v.Type().Elem()}
			if e.onPath(r) {
				e.write(`"[Circular]"`)
				return
			}
			e.refs = append(e.refs, r)
			v = v.Elem()
			if k := v.Kind(); k == reflect.Pointer || k == reflect.Interface {
				e.enter()
			}
			continue
		}
		e.concrete(v)
		return
	}
}

func (e *serEncoder) concrete(v reflect.Value) {
	switch k := v.Kind(); k {
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		e.scalar(v, k)
	case reflect.String:
		if v.Type() == serNumberType {
			e.number(v.String())
			return
		}
		e.writeString(v.String(), "")
	case reflect.Struct:
		if v.Type() == serBigIntType {
			e.bigInt(v)
			return
		}
		e.structValue(v)
	case reflect.Map:
		e.mapValue(v)
	case reflect.Slice:
		switch {
		case v.Type() == serRawMessageType:
			e.rawMessage(v)
		case v.IsNil():
			e.write("null")
		case v.Type().Elem().Kind() == reflect.Uint8:
			e.bytesValue(v)
		default:
			e.list(v, true)
		}
	case reflect.Array:
		e.list(v, false)
	case reflect.Func:
		if v.IsNil() {
			e.write("null")
		} else {
			e.write(`"[Function]"`)
		}
	default: // Chan, Complex64, Complex128, UnsafePointer
		e.fail("unsupported type " + v.Type().String())
	}
}

// serScalarKind is the kind of t when scalar emits its values, else reflect.Invalid. Knowing it
// per type lets structs, slices and maps skip the general dispatch for their scalar members.
func serScalarKind(t reflect.Type) reflect.Kind {
	switch k := t.Kind(); k {
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return k
	case reflect.String:
		if t != serNumberType {
			return k
		}
	}
	return reflect.Invalid
}

// scalar emits v of kind k, a kind serScalarKind returns.
func (e *serEncoder) scalar(v reflect.Value, k reflect.Kind) {
	switch k {
	case reflect.Bool:
		if v.Bool() {
			e.write("true")
		} else {
			e.write("false")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.buf = strconv.AppendInt(e.buf, v.Int(), 10)
		e.checkCap()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		e.buf = strconv.AppendUint(e.buf, v.Uint(), 10)
		e.checkCap()
	case reflect.Float32:
		e.buf = serAppendFloat(e.buf, v.Float(), 32)
		e.checkCap()
	case reflect.Float64:
		e.buf = serAppendFloat(e.buf, v.Float(), 64)
		e.checkCap()
	case reflect.String:
		e.writeString(v.String(), "")
	}
}

// serAppendFloat appends f in the form of ECMAScript's Number.prototype.toString, as
// encoding/json's floatEncoder does, with -0 as 0 and NaN and ±Inf as null.
func serAppendFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return append(b, "null"...)
	case f == 0:
		return append(b, '0')
	}
	format := byte('f')
	abs := math.Abs(f)
	if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// 1.5e-07 is 1.5e-7 in ECMAScript.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// serSafeASCII[c] reports whether ASCII byte c needs no escape inside a JSON string.
var serSafeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const serHex = "0123456789abcdef"

// writeString emits s quoted, charging one character per code point (an invalid byte is one
// U+FFFD). With a non-empty strictReason an invalid byte fails with that reason instead.
// It reads only as much of s as it emits.
func (e *serEncoder) writeString(s string, strictReason string) {
	e.buf = append(e.buf, '"')
	for i := 0; i < len(s); {
		if e.chars == 0 {
			e.stop(budgetChars)
		}
		room := MaxContentCodePoints - e.runes()
		if room < 0 {
			e.stop(budgetContent)
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if serSafeASCII[c] {
				end := min(len(s), i+min(e.chars, room+1))
				j := i + 1
				for j < end && s[j] < utf8.RuneSelf && serSafeASCII[s[j]] {
					j++
				}
				e.buf = append(e.buf, s[i:j]...)
				e.chars -= j - i
				i = j
				continue
			}
			switch c {
			case '"', '\\':
				e.buf = append(e.buf, '\\', c)
			case '\b':
				e.buf = append(e.buf, '\\', 'b')
			case '\f':
				e.buf = append(e.buf, '\\', 'f')
			case '\n':
				e.buf = append(e.buf, '\\', 'n')
			case '\r':
				e.buf = append(e.buf, '\\', 'r')
			case '\t':
				e.buf = append(e.buf, '\\', 't')
			default:
				e.buf = append(e.buf, '\\', 'u', '0', '0', serHex[c>>4], serHex[c&0xF])
			}
			e.chars--
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			if strictReason != "" {
				e.fail(strictReason)
			}
			e.buf = append(e.buf, "\uFFFD"...)
			e.extra += len("\uFFFD") - 1
		} else {
			e.buf = append(e.buf, s[i:i+size]...)
			e.extra += size - 1
		}
		e.chars--
		i += size
	}
	e.writeByte('"')
}

// key emits an object key and the colon.
func (e *serEncoder) key(k string) {
	e.writeString(k, "")
	e.writeByte(':')
}

// bytesValue emits a []byte as a string. Only the bytes that the character budget can reach
// are copied: 4 bytes per character cover every code point the writer may emit.
func (e *serEncoder) bytesValue(v reflect.Value) {
	b := v.Bytes()
	b = b[:min(len(b), 4*(e.chars+1))]
	e.writeString(string(b), "invalid UTF-8 in "+v.Type().String())
}

// number emits a json.Number literal exactly.
func (e *serEncoder) number(n string) {
	if n == "" {
		e.write("0")
		return
	}
	if len(n) > e.chars {
		e.stop(budgetChars)
	}
	if !serIsNumber(n) {
		e.fail("invalid json.Number " + strconv.Quote(n))
	}
	e.chars -= len(n)
	e.write(n)
}

// serIsNumber reports whether s is a number literal of the JSON grammar.
func serIsNumber(s string) bool {
	i := 0
	digits := func() bool {
		start := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

// bigInt emits a big.Int as "<decimal>n" while its magnitude fits MaxBigIntBits.
func (e *serEncoder) bigInt(v reflect.Value) {
	var x *big.Int
	switch {
	case v.CanAddr() && v.CanInterface():
		x = v.Addr().Interface().(*big.Int)
	case v.CanInterface():
		c := v.Interface().(big.Int) // a shallow copy, only read
		x = &c
	case v.CanAddr():
		// Reached through an unexported embedded field: read it in place.
		x = reflect.NewAt(serBigIntType, v.Addr().UnsafePointer()).Interface().(*big.Int)
	default:
		e.fail("unreadable " + serBigIntType.String())
	}
	if x.BitLen() > MaxBigIntBits {
		e.stop(budgetBigInt)
	}
	e.buf = append(e.buf, '"')
	e.buf = x.Append(e.buf, 10)
	e.write(`n"`)
}

// list emits a slice or an array.
func (e *serEncoder) list(v reflect.Value, isSlice bool) {
	n := v.Len()
	elem := v.Type().Elem()
	if isSlice && n > 0 {
		r := serRef{kind: reflect.Slice, ptr: v.Pointer(), len: n, elem: elem}
		if e.onPath(r) {
			e.write(`"[Circular]"`)
			return
		}
		e.refs = append(e.refs, r)
	}
	e.enter()
	e.writeByte('[')
	scalar := serScalarKind(elem)
	for i := range n {
		e.entry()
		e.node()
		if i > 0 {
			e.writeByte(',')
		}
		e.push(serPathSeg{index: i})
		if scalar != reflect.Invalid {
			e.scalar(v.Index(i), scalar)
		} else {
			e.value(v.Index(i))
		}
		e.pop()
	}
	e.writeByte(']')
}

// mapValue emits a map with string-kind keys; see "Large maps and determinism" at Serialize.
func (e *serEncoder) mapValue(v reflect.Value) {
	t := v.Type()
	if t.Key().Kind() != reflect.String {
		e.fail("unsupported map type " + t.String() + " (keys must be strings)")
	}
	if v.IsNil() {
		e.write("null")
		return
	}
	r := serRef{kind: reflect.Map, ptr: v.Pointer()}
	if e.onPath(r) {
		e.write(`"[Circular]"`)
		return
	}
	e.refs = append(e.refs, r)
	e.enter()
	e.writeByte('{')
	n := v.Len()
	if n > e.entries {
		e.stop(budgetEntries)
	}
	e.entries -= n
	mark := len(e.kv)
	it := v.MapRange()
	if v.CanInterface() {
		// Copy keys and values without allocating per entry: one scratch key, one slice.
		key := reflect.New(t.Key()).Elem()
		vals := reflect.MakeSlice(reflect.SliceOf(t.Elem()), n, n)
		for i := 0; i < n && it.Next(); i++ {
			key.SetIterKey(it)
			val := vals.Index(i)
			val.SetIterValue(it)
			e.kv = append(e.kv, serMapEntry{key: key.String(), val: val})
		}
	} else {
		for i := 0; i < n && it.Next(); i++ {
			e.kv = append(e.kv, serMapEntry{key: it.Key().String(), val: it.Value()})
		}
	}
	entries := e.kv[mark:]
	scalar := serScalarKind(t.Elem())
	slices.SortFunc(entries, func(a, b serMapEntry) int { return serCompareKeys(a.key, b.key) })
	for i := range entries {
		e.node()
		if i > 0 {
			e.writeByte(',')
		}
		e.push(serPathSeg{key: entries[i].key, index: -1})
		e.key(entries[i].key)
		if scalar != reflect.Invalid {
			e.scalar(entries[i].val, scalar)
		} else {
			e.value(entries[i].val)
		}
		e.pop()
	}
	clear(e.kv[mark:])
	e.kv = e.kv[:mark]
	e.writeByte('}')
}

// serKeyCompareBytes bounds the bytes of a key that a comparison reads. Any key longer than this
// has more than MaxStringChars code points.
const serKeyCompareBytes = 4*MaxStringChars + 4

// serCompareKeys orders keys by the bytes of their final form (each invalid UTF-8 byte read as
// U+FFFD; UTF-8 byte order is code point order), ties broken by the raw bytes. It reads at
// most keyCompareBytes of each key.
func serCompareKeys(a, b string) int {
	a, b = a[:min(len(a), serKeyCompareBytes)], b[:min(len(b), serKeyCompareBytes)]
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if ca < utf8.RuneSelf && cb < utf8.RuneSelf {
			if ca != cb {
				return cmp.Compare(ca, cb)
			}
			i++
			j++
			continue
		}
		ra, na := utf8.DecodeRuneInString(a[i:])
		rb, nb := utf8.DecodeRuneInString(b[j:])
		if ra != rb {
			return cmp.Compare(ra, rb)
		}
		i += na
		j += nb
	}
	switch {
	case i < len(a):
		return 1
	case j < len(b):
		return -1
	}
	return strings.Compare(a, b)
}

// structValue emits a struct whose fields are all exported.
func (e *serEncoder) structValue(v reflect.Value) {
	if t := v.Type(); t != e.structType {
		e.structType, e.structInfo = t, structFieldsOf(t)
	}
	info := e.structInfo
	if info.opaque {
		e.fail("opaque struct " + v.Type().String())
	}
	e.enter()
	e.writeByte('{')
	first := true
	for i := range info.fields {
		f := &info.fields[i]
		e.entry()
		fv, ok := serFieldByIndex(v, f.index)
		if !ok || f.omitEmpty && serIsEmpty(fv) || f.omitZero && fv.IsZero() {
			continue
		}
		e.node()
		if !first {
			e.writeByte(',')
		}
		first = false
		e.push(serPathSeg{key: f.name, index: -1})
		if f.runes <= e.chars && e.runes()+len(f.quoted)-len(f.name)+f.runes <= MaxContentCodePoints {
			// What e.key(f.name) would write, without its checks.
			e.buf = append(e.buf, f.quoted...)
			e.extra += len(f.name) - f.runes
			e.chars -= f.runes
		} else {
			e.key(f.name)
		}
		if f.scalar != reflect.Invalid {
			e.scalar(fv, f.scalar)
		} else {
			e.value(fv)
		}
		e.pop()
	}
	e.writeByte('}')
}

// serFieldByIndex is v.FieldByIndex that reports false at a nil embedded pointer.
func serFieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	if len(index) == 1 {
		return v.Field(index[0]), true
	}
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

// serIsEmpty is encoding/json's omitempty test.
func serIsEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// rawMessage parses a json.RawMessage and re-emits it canonically.
func (e *serEncoder) rawMessage(v reflect.Value) {
	if v.IsNil() {
		e.write("null")
		return
	}
	data := v.Bytes()
	if len(data) > MaxRawMessageBytes {
		e.stop(budgetRawMessage)
	}
	if !json.Valid(data) {
		var discard bytes.Buffer
		reason := "invalid json.RawMessage"
		if err := json.Compact(&discard, data); err != nil {
			reason += " (" + err.Error() + ")"
		}
		e.fail(reason)
	}
	depth := e.depth
	e.rawValue(data, serSkipSpace(data, 0))
	e.depth = depth
}

// rawValue emits the valid JSON value at data[i] and returns the index after it; its node
// has been charged by the caller.
func (e *serEncoder) rawValue(data []byte, i int) int {
	switch data[i] {
	case '{':
		return e.rawObject(data, i)
	case '[':
		return e.rawArray(data, i)
	case '"':
		end := skipString(data, i)
		e.writeString(unquote(data[i:end]), "")
		return end
	}
	end := skipValue(data, i)
	e.buf = append(e.buf, data[i:end]...)
	e.checkCap()
	return end
}

func (e *serEncoder) rawObject(data []byte, i int) int {
	e.enter()
	e.writeByte('{')
	mark := len(e.members)
	i = serSkipSpace(data, i+1)
	for data[i] != '}' {
		if len(e.members)-mark == e.entries {
			e.stop(budgetEntries)
		}
		end := skipString(data, i)
		key := unquote(data[i:end])
		i = serSkipSpace(data, serSkipSpace(data, end)+1) // past ':'
		e.members = append(e.members, serRawMember{key: key, start: i})
		i = serSkipSpace(data, skipValue(data, i))
		if data[i] == ',' {
			i = serSkipSpace(data, i+1)
		}
	}
	members := e.members[mark:]
	e.entries -= len(members)
	slices.SortFunc(members, func(a, b serRawMember) int { return strings.Compare(a.key, b.key) })
	for k := 1; k < len(members); k++ {
		if members[k].key == members[k-1].key {
			e.fail("duplicate key " + strconv.Quote(serTruncate(members[k].key, 64)) + " in json.RawMessage")
		}
	}
	for k, m := range members {
		e.node()
		if k > 0 {
			e.writeByte(',')
		}
		e.push(serPathSeg{key: m.key, index: -1})
		e.key(m.key)
		e.rawValue(data, m.start)
		e.pop()
	}
	clear(e.members[mark:])
	e.members = e.members[:mark]
	e.writeByte('}')
	e.depth--
	return i + 1
}

func (e *serEncoder) rawArray(data []byte, i int) int {
	e.enter()
	e.writeByte('[')
	i = serSkipSpace(data, i+1)
	for n := 0; data[i] != ']'; n++ {
		e.entry()
		e.node()
		if n > 0 {
			e.writeByte(',')
		}
		e.push(serPathSeg{index: n})
		i = serSkipSpace(data, e.rawValue(data, i))
		e.pop()
		if data[i] == ',' {
			i = serSkipSpace(data, i+1)
		}
	}
	e.writeByte(']')
	e.depth--
	return i + 1
}

// serSkipSpace, skipString and skipValue (json.go) read JSON that json.Valid accepted.

func serSkipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// serFormatPath renders a path as $.key, $["odd key"] and $[3], keys cut at 64 code points.
func serFormatPath(segs []serPathSeg) string {
	var b strings.Builder
	b.WriteByte('$')
	for _, s := range segs {
		if s.index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
			continue
		}
		k := serTruncate(s.key, 64)
		if serIsIdentifier(k) {
			b.WriteByte('.')
			b.WriteString(k)
		} else {
			b.WriteByte('[')
			b.WriteString(strconv.Quote(k))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// serTruncate cuts s after n code points, marking the cut with "…".
func serTruncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i] + "…"
		}
		n--
	}
	return s
}

func serIsIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c == '$' || unicode.IsLetter(c) || i > 0 && unicode.IsDigit(c)) {
			return false
		}
	}
	return true
}
