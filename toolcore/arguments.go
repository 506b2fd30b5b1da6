package toolcore

import "encoding/json"

// Arguments is read-only access to a call's arguments object, held as canonical JSON (keys
// sorted, no insignificant space, number literals kept exactly as sent).
type Arguments struct {
	canonical string
}

// Raw returns a fresh copy of the canonical JSON.
func (a Arguments) Raw() []byte { return []byte(a.canonical) }

// Decode strictly decodes into v (a pointer to a struct or map): unknown fields are rejected,
// numbers must fit their Go type exactly, into `any` they decode as json.Number.
func (a Arguments) Decode(v any) error { panic("TODO") }

// Keys returns the sorted keys.
func (a Arguments) Keys() []string { panic("TODO") }

// Has reports whether key is present.
func (a Arguments) Has(key string) bool { panic("TODO") }

// Value returns the canonical JSON of one member.
func (a Arguments) Value(key string) (json.RawMessage, bool) { panic("TODO") }

// String returns a string member; an error says when it is missing or not a string.
func (a Arguments) String(key string) (string, error) { panic("TODO") }

// Number returns a number member exactly as sent.
func (a Arguments) Number(key string) (json.Number, error) { panic("TODO") }

// Int64 returns an integer member; non-integers and values beyond int64 are errors.
func (a Arguments) Int64(key string) (int64, error) { panic("TODO") }

// Float64 returns a number member as float64.
func (a Arguments) Float64(key string) (float64, error) { panic("TODO") }

// Bool returns a boolean member.
func (a Arguments) Bool(key string) (bool, error) { panic("TODO") }
