package toolcore

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
)

// Arguments is read-only access to a call's arguments object, held as canonical JSON (keys
// sorted, no insignificant space, number literals kept exactly as sent).
//
// Canonical means equal values give equal bytes: members sorted by the byte order of their
// unescaped keys, no whitespace, numbers copied literally (1.0 and 1 stay different, as sent),
// and strings escaped minimally like RFC 8785 and JSON.stringify (only `"`, `\` and code points
// below U+0020; short forms \b \t \n \f \r, else \u00xx). Any language can reproduce the bytes
// (sort keys by code point, then JSON.stringify without spaces, keeping number literals).
//
// The zero Arguments is the empty object. Arguments is a value: nothing a caller does to the bytes
// it parsed from, or to what an accessor returned, changes it.
//
// Accessor errors are plain errors written for the model, usable verbatim as a Reject reason:
// `"left" is required`, `"left" must be a number, got string`, `"count" must be an integer, got
// 1.5`.
//
// # Numbers
//
// Nothing rounds silently. A number literal without fraction and exponent is an integer: Int64,
// and Decode into an integer type, take it exactly or fail (1.5, 1e3 and 1.0 are not integers;
// values beyond the type's range fail). Float64, and Decode into float32/float64, take a literal
// with a fraction or exponent as the nearest float (what a decimal fraction means in binary), but
// fail on an integer literal the float cannot hold exactly (9007199254740993 is an error for
// float64, 9007199254740992 is not), on overflow, and on a non-zero literal that underflows to 0.
// Number and json.Number (also what Decode puts in an `any`) return the literal as sent.
type Arguments struct {
	canonical string
}

// object returns the canonical JSON, the zero value being {}.
func (a Arguments) object() string {
	if a.canonical == "" {
		return "{}"
	}
	return a.canonical
}

// Raw returns a fresh copy of the canonical JSON.
func (a Arguments) Raw() []byte { return []byte(a.object()) }

// MarshalJSON returns the canonical JSON, so Arguments can itself be a validated argument type
// (a pass-through validator: Accept(args)).
func (a Arguments) MarshalJSON() ([]byte, error) { return a.Raw(), nil }

// UnmarshalJSON takes a JSON object under the rules of the call boundary (MaxCallBytes,
// MaxArgumentsDepth, no duplicate keys, valid Unicode); on error a is unchanged.
func (a *Arguments) UnmarshalJSON(data []byte) error {
	if len(data) > MaxCallBytes {
		return fmt.Errorf("arguments: %d bytes, limit %d", len(data), MaxCallBytes)
	}
	canonical, err := canonicalObject(data, "arguments", MaxArgumentsDepth)
	if err != nil {
		return err
	}
	a.canonical = canonical
	return nil
}

// Len returns the number of members.
func (a Arguments) Len() int {
	n := 0
	for range members(a.object()) {
		n++
	}
	return n
}

// Keys returns the sorted keys.
func (a Arguments) Keys() []string {
	keys := []string{}
	for k := range members(a.object()) {
		keys = append(keys, k)
	}
	return keys
}

// Has reports whether key is present (with any value, null included).
func (a Arguments) Has(key string) bool {
	_, ok := a.lookup(key)
	return ok
}

// Value returns the canonical JSON of one member.
func (a Arguments) Value(key string) (json.RawMessage, bool) {
	v, ok := a.lookup(key)
	if !ok {
		return nil, false
	}
	return json.RawMessage(v), true
}

func (a Arguments) lookup(key string) (string, bool) {
	for k, v := range members(a.object()) {
		if k == key {
			return v, true
		}
		if k > key { // sorted
			break
		}
	}
	return "", false
}

// member returns the canonical value of key, which must be of kind want.
func (a Arguments) member(key string, want jsonKind, article string) (string, error) {
	v, ok := a.lookup(key)
	if !ok {
		return "", fmt.Errorf("%s is required", quoteForMessage(key))
	}
	if k := kindOf(v[0]); k != want {
		return "", fmt.Errorf("%s must be %s %s, got %s", quoteForMessage(key), article, want, k)
	}
	return v, nil
}

// String returns a string member; an error says when it is missing or not a string.
func (a Arguments) String(key string) (string, error) {
	v, err := a.member(key, kindString, "a")
	if err != nil {
		return "", err
	}
	return unquote(v), nil
}

// Number returns a number member exactly as sent.
func (a Arguments) Number(key string) (json.Number, error) {
	v, err := a.member(key, kindNumber, "a")
	if err != nil {
		return "", err
	}
	return json.Number(v), nil
}

// Int64 returns an integer member; non-integers (1.5, 1e3, 1.0) and values beyond int64 are errors.
func (a Arguments) Int64(key string) (int64, error) {
	v, ok := a.lookup(key)
	if !ok {
		return 0, fmt.Errorf("%s is required", quoteForMessage(key))
	}
	if reason := intReason(v, 64); reason != "" {
		return 0, errors.New(quoteForMessage(key) + " " + reason)
	}
	return strconv.ParseInt(v, 10, 64)
}

// Float64 returns a number member as float64 (see Numbers above for when that is an error).
func (a Arguments) Float64(key string) (float64, error) {
	v, ok := a.lookup(key)
	if !ok {
		return 0, fmt.Errorf("%s is required", quoteForMessage(key))
	}
	if reason := floatReason(v, 64); reason != "" {
		return 0, errors.New(quoteForMessage(key) + " " + reason)
	}
	return strconv.ParseFloat(v, 64)
}

// Bool returns a boolean member.
func (a Arguments) Bool(key string) (bool, error) {
	v, err := a.member(key, kindBool, "a")
	if err != nil {
		return false, err
	}
	return v == "true", nil
}

// Decode strictly decodes into v (a pointer to a struct or map): unknown fields are rejected,
// numbers must fit their Go type exactly, into `any` they decode as json.Number.
//
// Stricter than encoding/json, which does the decoding after these checks:
//   - struct field names match exactly (encoding/json also takes "LEFT" for "left", so
//     {"left":1,"LEFT":2} would silently become 2);
//   - null is accepted only by pointers, interfaces, maps and slices (encoding/json leaves a
//     float64 at 0 for null);
//   - an array must have exactly the length of a Go array;
//   - numbers follow the rules under Numbers above (encoding/json rounds 9007199254740993 into a
//     float64);
//   - json.Number fields take only JSON numbers.
//
// Types with their own UnmarshalJSON or UnmarshalText, fields with the ",string" option, and map
// keys are left to encoding/json. Decode into a fresh value: like encoding/json it merges into
// maps and keeps fields that are absent from the arguments.
func (a Arguments) Decode(v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("decode arguments: want a non-nil pointer, got %T", v)
	}
	obj := a.object()
	var c decodeChecker
	if err := c.check(rv.Type().Elem(), obj, ""); err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(obj))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return fmt.Errorf("%s must be %s, got %s", pathForMessage(typeErr.Field), expectation(typeErr.Type), typeErr.Value)
		}
		return fmt.Errorf("decode arguments: %w", err)
	}
	return nil
}

// decodeChecker checks canonical values against Go types before encoding/json decodes them.
type decodeChecker struct{}

// check checks the canonical value v against Go type t (see Decode).
func (c decodeChecker) check(t reflect.Type, v string, path string) error {
	if delegated(t) {
		return nil
	}
	k := kindOf(v[0])
	switch t.Kind() {
	case reflect.Pointer:
		if k == kindNull {
			return nil
		}
		return c.check(t.Elem(), v, path)
	case reflect.Interface:
		return nil
	case reflect.Map:
		if k == kindNull {
			return nil
		}
		if k != kindObject {
			return kindError(path, t, k)
		}
		for key, mv := range members(v) {
			if err := c.check(t.Elem(), mv, joinPath(path, key)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice:
		if k == kindNull || (k == kindString && t.Elem().Kind() == reflect.Uint8) {
			return nil // base64 for []byte, checked by encoding/json
		}
		return c.elements(t, v, path, k)
	case reflect.Array:
		return c.elements(t, v, path, k)
	case reflect.Struct:
		if k != kindObject {
			return kindError(path, t, k)
		}
		fields := structFieldsOf(t)
		for key, mv := range members(v) {
			f, ok := fields.field(key)
			if !ok {
				return unknownField(path, key, fields)
			}
			if f.stringOpt {
				continue
			}
			if err := c.check(f.typ, mv, joinPath(path, key)); err != nil {
				return err
			}
		}
		return nil
	case reflect.String:
		want := kindString
		if t == reflect.TypeFor[json.Number]() {
			want = kindNumber
		}
		if k != want {
			return kindError(path, t, k)
		}
		return nil
	case reflect.Bool:
		if k != kindBool {
			return kindError(path, t, k)
		}
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return numberError(path, t, k, v, intReason)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return numberError(path, t, k, v, uintReason)
	case reflect.Float32, reflect.Float64:
		return numberError(path, t, k, v, floatReason)
	default:
		return nil // encoding/json rejects the rest (channels, funcs, complex numbers)
	}
}

// delegated reports whether t decodes itself (encoding/json calls its methods).
func delegated(t reflect.Type) bool {
	for _, m := range []reflect.Type{reflect.TypeFor[json.Unmarshaler](), reflect.TypeFor[encoding.TextUnmarshaler]()} {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return true
		}
	}
	return false
}

func (c decodeChecker) elements(t reflect.Type, v string, path string, k jsonKind) error {
	if k != kindArray {
		return kindError(path, t, k)
	}
	n := 0
	for ev := range elements(v) {
		if err := c.check(t.Elem(), ev, path+"["+strconv.Itoa(n)+"]"); err != nil {
			return err
		}
		n++
	}
	if t.Kind() == reflect.Array && n != t.Len() {
		return fmt.Errorf("%s must be an array of %d elements, got %d", pathForMessage(path), t.Len(), n)
	}
	return nil
}

func numberError(path string, t reflect.Type, k jsonKind, v string, reason func(string, int) string) error {
	if k != kindNumber {
		return kindError(path, t, k)
	}
	if r := reason(v, t.Bits()); r != "" {
		return errors.New(pathForMessage(path) + " " + r)
	}
	return nil
}

func kindError(path string, t reflect.Type, k jsonKind) error {
	return fmt.Errorf("%s must be %s, got %s", pathForMessage(path), expectation(t), k)
}

// expectation names what Go type t takes, in JSON terms.
func expectation(t reflect.Type) string {
	if t == reflect.TypeFor[json.Number]() {
		return "a number"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return expectation(t.Elem())
	default:
		return "a value of Go type " + t.String()
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func pathForMessage(path string) string {
	if path == "" {
		return "arguments"
	}
	return quoteForMessage(path)
}

func unknownField(path, key string, fields *structFields) error {
	for _, f := range fields.fields {
		if strings.EqualFold(f.name, key) {
			return fmt.Errorf("unknown field %s (did you mean %s?)", pathForMessage(joinPath(path, key)), quoteForMessage(f.name))
		}
	}
	return fmt.Errorf("unknown field %s", pathForMessage(joinPath(path, key)))
}

// The reason functions return "" when the canonical number literal lit (or a non-number, for
// the accessors) fits the rule, else the rest of a message that starts with the member's name.

func notNumber(lit string) string {
	if k := kindOf(lit[0]); k != kindNumber {
		return "got " + k.String()
	}
	return ""
}

func isIntLiteral(lit string) bool { return !strings.ContainsAny(lit, ".eE") }

func intReason(lit string, bits int) string {
	if r := notNumber(lit); r != "" {
		return "must be an integer, " + r
	}
	if !isIntLiteral(lit) {
		return "must be an integer, got " + clip(lit)
	}
	if _, err := strconv.ParseInt(lit, 10, bits); err != nil {
		return fmt.Sprintf("must be an integer between %d and %d, got %s",
			int64(math.MinInt64)>>(64-bits), int64(math.MaxInt64)>>(64-bits), clip(lit))
	}
	return ""
}

func uintReason(lit string, bits int) string {
	if r := notNumber(lit); r != "" {
		return "must be a non-negative integer, " + r
	}
	if !isIntLiteral(lit) {
		return "must be a non-negative integer, got " + clip(lit)
	}
	if _, err := strconv.ParseUint(lit, 10, bits); err != nil {
		return fmt.Sprintf("must be an integer between 0 and %d, got %s", uint64(math.MaxUint64)>>(64-bits), clip(lit))
	}
	return ""
}

func floatReason(lit string, bits int) string {
	if r := notNumber(lit); r != "" {
		return "must be a number, " + r
	}
	f, err := strconv.ParseFloat(lit, bits)
	if err != nil || (f == 0 && nonZeroLiteral(lit)) {
		return fmt.Sprintf("must be a number within float%d range, got %s", bits, clip(lit))
	}
	if isIntLiteral(lit) && !exactInteger(lit, f, bits) {
		return fmt.Sprintf("must be an integer that float%d holds exactly, got %s", bits, clip(lit))
	}
	return ""
}

// nonZeroLiteral reports whether the mantissa of lit has a non-zero digit.
func nonZeroLiteral(lit string) bool {
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		lit = lit[:i]
	}
	return strings.ContainsAny(lit, "123456789")
}

// exactInteger reports whether the finite float f (of bits) is exactly the integer literal lit.
func exactInteger(lit string, f float64, bits int) bool {
	digits := len(strings.TrimPrefix(lit, "-"))
	if (bits == 64 && digits <= 15) || (bits == 32 && digits <= 7) {
		return true // below 2^53 (2^24): every integer is exact
	}
	want, ok := new(big.Int).SetString(lit, 10) // at most 309 digits: f is finite
	if !ok {
		return false
	}
	got, acc := new(big.Float).SetFloat64(f).Int(nil)
	return acc == big.Exact && got.Cmp(want) == 0
}

// clip bounds a literal quoted in a message.
func clip(lit string) string {
	if len(lit) > 32 {
		return lit[:32] + "..."
	}
	return lit
}
