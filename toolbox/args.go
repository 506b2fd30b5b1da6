package toolbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/toolcore"
)

// fields is a call's arguments object split into members, for validators that give their own
// model-readable reasons. Members hold canonical JSON, numbers exactly as sent.
type fields map[string]json.RawMessage

// readFields splits args and refuses members not in allowed. The reason is "" when it succeeds.
func readFields(args toolcore.Arguments, allowed ...string) (fields, string) {
	return readFieldsJSON(args.Raw(), allowed...)
}

// readFieldsJSON is readFields of an arguments object's JSON.
func readFieldsJSON(raw []byte, allowed ...string) (fields, string) {
	var f fields
	if err := json.Unmarshal(raw, &f); err != nil || f == nil {
		return nil, "arguments must be a JSON object"
	}
	var unknown []string
	for k := range f {
		if !contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Sprintf("unknown argument %q; allowed: %s", unknown[0], quoteList(allowed))
	}
	return f, ""
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func quoteList(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// kind names a JSON value's type as a model would say it.
func kind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// str reads a string member. present is false when it is missing.
func (f fields) str(key string) (s string, present bool, reason string) {
	raw, ok := f[key]
	if !ok {
		return "", false, ""
	}
	if kind(raw) != "a string" {
		return "", true, fmt.Sprintf("%q must be a string, not %s", key, kind(raw))
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", true, fmt.Sprintf("%q must be a string", key)
	}
	return s, true, ""
}

// number reads a number member as its exact literal. present is false when it is missing.
func (f fields) number(key string) (n json.Number, present bool, reason string) {
	raw, ok := f[key]
	if !ok {
		return "", false, ""
	}
	if kind(raw) != "a number" {
		return "", true, fmt.Sprintf("%q must be a number, not %s", key, kind(raw))
	}
	return json.Number(bytes.TrimSpace(raw)), true, ""
}
