package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/cedar-policy/cedar-go"
)

// MaxDepth bounds the nesting of arguments a policy sees; deeper arguments deny the call.
const MaxDepth = 64

// maxNumberChars bounds the text of a number converted to a Cedar value: longer numbers have
// none (no Long or four-decimal decimal needs more), and the bound keeps big.Rat cheap.
const maxNumberChars = 64

// ArgumentsError is arguments that have no Cedar value: the call is denied (fail closed) with
// its text as the reason.
type ArgumentsError struct {
	// Path is the JSON Pointer of the offending value ("" for the whole arguments).
	Path string
	// Problem says what is wrong.
	Problem string
}

// Error returns "arguments at <path>: <problem>".
func (e *ArgumentsError) Error() string {
	path := e.Path
	if path == "" {
		path = "/"
	}
	return "arguments at " + path + ": " + e.Problem + " (policies cannot see it)"
}

// argumentsRecord converts validated arguments (a JSON object; empty is {}) to a Cedar record.
func argumentsRecord(raw json.RawMessage) (cedar.Record, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return cedar.NewRecord(nil), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return cedar.Record{}, &ArgumentsError{Problem: "not JSON"}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return cedar.Record{}, &ArgumentsError{Problem: "not an object"}
	}
	val, err := toCedar(obj, 0)
	if err != nil {
		return cedar.Record{}, err
	}
	return val.(cedar.Record), nil
}

// toCedar converts a decoded JSON value; an error's Path is built as the recursion unwinds.
func toCedar(v any, depth int) (cedar.Value, error) {
	if depth > MaxDepth {
		return nil, &ArgumentsError{Problem: fmt.Sprintf("nested deeper than %d", MaxDepth)}
	}
	switch v := v.(type) {
	case string:
		return cedar.String(v), nil
	case bool:
		return cedar.Boolean(v), nil
	case json.Number:
		return numberValue(string(v))
	case map[string]any:
		m := make(cedar.RecordMap, len(v))
		for k, item := range v {
			if item == nil {
				continue // a null member is absent: `has` is false
			}
			cv, err := toCedar(item, depth+1)
			if err != nil {
				return nil, under(err, pointerToken(k))
			}
			m[cedar.String(k)] = cv
		}
		return cedar.NewRecord(m), nil
	case []any:
		items := make([]cedar.Value, len(v))
		for i, item := range v {
			if item == nil {
				return nil, &ArgumentsError{Path: "/" + strconv.Itoa(i), Problem: "null in an array"}
			}
			cv, err := toCedar(item, depth+1)
			if err != nil {
				return nil, under(err, strconv.Itoa(i))
			}
			items[i] = cv
		}
		return cedar.NewSet(items...), nil
	}
	return nil, &ArgumentsError{Problem: fmt.Sprintf("unexpected %T", v)}
}

// under prefixes err's path with token.
func under(err error, token string) error {
	if ae, ok := err.(*ArgumentsError); ok {
		return &ArgumentsError{Path: "/" + token + ae.Path, Problem: ae.Problem}
	}
	return err
}

// pointerToken escapes a member name as a JSON Pointer token, cut for the message.
func pointerToken(k string) string {
	k = strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
	return cutForError(k)
}

// numberValue is a Long for an integer in the int64 range, a decimal for a number with at most
// four decimals in decimal's range, else an error.
func numberValue(s string) (cedar.Value, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return cedar.Long(n), nil
	}
	bad := &ArgumentsError{Problem: "the number " + cutForError(s) + " is neither a Long (64-bit integer) nor a decimal (at most 4 decimals)"}
	if len(s) > maxNumberChars {
		return nil, bad
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		// big.Rat would expand a huge exponent: only small ones can give a Long or a decimal.
		exp, err := strconv.Atoi(s[i+1:])
		if err != nil || exp > 40 || exp < -40 {
			return nil, bad
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, bad
	}
	if r.IsInt() && r.Num().IsInt64() {
		return cedar.Long(r.Num().Int64()), nil
	}
	scaled := new(big.Rat).Mul(r, big.NewRat(10000, 1))
	if !scaled.IsInt() || !scaled.Num().IsInt64() {
		return nil, bad
	}
	d, err := cedar.NewDecimal(scaled.Num().Int64(), -4)
	if err != nil {
		return nil, bad
	}
	return d, nil
}
