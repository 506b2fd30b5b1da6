package toolcore

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Bounds of an acceptable tool call (INVALID_TOOL_CALL beyond them).
//
// MaxCallBytes: the snapshot travels as a Temporal payload (the workflow input), and the SDK's JSON
// converter re-escapes '<', '>' and '&' as \u003c (six bytes for one). At 256 KiB even a call made
// only of such characters stays below the 2 MiB payload limit (6 x 256 KiB = 1.5 MiB), and a
// typical call (well under 16 KiB) stays far below the 512 KiB warning. It is also above what a
// model writes in one call (a long file body is 100-200 KiB).
//
// MaxArgumentsDepth: the arguments object is level 1; real tool schemas nest less than 10 levels.
// The bound keeps the recursive scanner's stack, and every later decode, shallow.
//
// MaxIDBytes: the id becomes the workflow ID "toolcall-<id>" (Temporal's default limit is 1000
// bytes, leaving room for a caller's scope prefix), a search attribute and a log field. Provider
// ids are 24-40 bytes.
//
// MaxNameBytes: an unknown name is not a contract error but a TOOL_NOT_FOUND result that quotes
// it, so the bound is generous (registered names have at most 64 bytes) and only keeps messages
// and logs small.
const (
	MaxCallBytes      = 256 << 10 // whole call JSON, bytes
	MaxArgumentsDepth = 64        // nesting of objects and arrays inside arguments
	MaxIDBytes        = 256       // tool call id, bytes
	MaxNameBytes      = 256       // tool name as called (may be unknown), bytes
)

// ToolCall is an immutable, deep snapshot of a well-formed tool call. The zero value is invalid.
// It encodes to (and decodes from, strictly) the wire shape
// {"type":"toolCall","id":"...","name":"...","arguments":{...}}.
type ToolCall struct {
	id   string
	name string
	args Arguments
}

// ParseToolCall snapshots untrusted JSON. Every malformed shape is a *ContractError with
// CodeInvalidToolCall whose message says what is wrong (offsets in messages count bytes from 0).
//
// Accepted is one JSON object (RFC 8259, whitespace allowed, nothing after it) of at most
// MaxCallBytes bytes with:
//   - "type": exactly the string "toolCall";
//   - "id": a string of 1 to MaxIDBytes bytes, not blank, without control or invisible characters
//     (see below); any other Unicode is allowed (a durable call escapes the ID into an ASCII
//     workflow ID, see the client package);
//   - "name": the same rules with MaxNameBytes; it need not be registered (an unknown name is a
//     TOOL_NOT_FOUND result later, not a contract error);
//   - "arguments": a JSON object nesting at most MaxArgumentsDepth levels (the object is level 1).
//
// Member names match exactly (case-sensitive). Other top-level members are tolerated and dropped,
// so producers may attach metadata (e.g. a provider's thought signature); they must still be
// well-formed and within the bounds. Anywhere in the document, a key twice in one object, invalid
// UTF-8, or a \u escape of a lone surrogate is rejected: JSON parsers disagree on what such input
// means (first key wins, last key wins, U+FFFD), and the call must mean one thing to every
// component and every language that reads it.
//
// Forbidden in id and name, because they reach workflow IDs, search attributes, log lines and the
// UI: C0 and C1 controls and DEL; U+2028 and U+2029 (line breaks to JavaScript and many log
// viewers); and invisible format characters that hide or reorder text (soft hyphen, U+061C,
// U+180E, U+200B-U+200F, U+202A-U+202E, U+2060-U+206F, U+FEFF, U+FFF9-U+FFFB, and the tag
// characters U+E0000-U+E007F). Blank means made only of white space and characters that draw
// nothing by themselves: combining marks, variation selectors, the Hangul fillers (U+115F,
// U+1160, U+3164, U+FFA0), U+2800 BRAILLE PATTERN BLANK and a few more (blankLooking). The lists are fixed, not taken from Go's Unicode tables, so a
// recorded call never becomes invalid on replay under a newer Go.
//
// The snapshot keeps id and name as sent and the arguments in canonical form (see [Arguments]);
// it shares no memory with data.
func ParseToolCall(data []byte) (ToolCall, error) {
	if len(data) > MaxCallBytes {
		return ToolCall{}, invalidCall("%d bytes, limit %d", len(data), MaxCallBytes)
	}
	// One allocation for the stacks a typical call needs; they grow if it is not enough.
	stacks := new(struct {
		path    [8]pathSeg
		members [16]member
	})
	s := scanner{data: data, maxDepth: MaxArgumentsDepth, path: stacks.path[:0], members: stacks.members[:0]}
	s.skipWS()
	if s.pos >= len(data) {
		return ToolCall{}, invalidCall("empty input, want a JSON object")
	}
	if k := kindOf(data[s.pos]); k != kindObject {
		if err := s.malformed(); err != nil {
			return ToolCall{}, invalidCall("%v", err)
		}
		return ToolCall{}, invalidCall("must be a JSON object, got %s", k)
	}
	env, err := s.envelope()
	if err != nil {
		return ToolCall{}, invalidCall("%v", err)
	}
	return env.check()
}

// envelopeField is what the scanner saw for one known top-level member.
type envelopeField struct {
	kind jsonKind // kindInvalid: absent
	text string   // string contents, or canonical JSON of an object
}

type envelope struct {
	typ, id, name, args envelopeField
}

// envelope scans the top-level object at s.pos, keeping the known members and checking the rest.
func (s *scanner) envelope() (envelope, error) {
	var env envelope
	keys := make([]member, 0, 8)
	var discard []byte
	err := s.eachMember(func(key []byte) error {
		keys = append(keys, member{key: key})
		s.path = append(s.path[:0], pathSeg{key: key})
		var field *envelopeField
		switch string(key) {
		case "type":
			field = &env.typ
		case "id":
			field = &env.id
		case "name":
			field = &env.name
		case "arguments":
			field = &env.args
		}
		kind := kindOf(s.data[s.pos])
		switch {
		case field != nil && kind == kindString:
			text, _, err := s.str()
			if err != nil {
				return err
			}
			str := wireTypeValue // the expected type costs no allocation
			if field != &env.typ || string(text) != wireTypeValue {
				str = string(text)
			}
			*field = envelopeField{kind: kind, text: str}
		case field == &env.args && kind == kindObject:
			out, err := s.value(make([]byte, 0, len(s.data)-s.pos))
			if err != nil {
				return err
			}
			*field = envelopeField{kind: kind, text: string(out)}
		default:
			var err error
			if discard, err = s.value(discard[:0]); err != nil {
				return err
			}
			if field != nil {
				*field = envelopeField{kind: kind}
			}
		}
		return nil
	})
	if err != nil {
		return env, err
	}
	s.skipWS()
	if s.pos < len(s.data) {
		return env, s.syntaxError(s.pos, "unexpected %s after the tool call object", s.found(s.pos))
	}
	s.path = s.path[:0]
	if !membersSorted(keys) {
		if dup := sortMembers(keys); dup != nil {
			return env, &jsonError{msg: "duplicate key " + quoteForMessage(dup), wellFormed: true}
		}
	}
	return env, nil
}

// check applies the rules on the known members, in wire order.
func (env envelope) check() (ToolCall, error) {
	switch {
	case env.typ.kind == kindInvalid:
		return ToolCall{}, invalidCall(`missing "type"`)
	case env.typ.kind != kindString:
		return ToolCall{}, invalidCall(`"type" must be a string, got %s`, env.typ.kind)
	case env.typ.text != wireTypeValue:
		return ToolCall{}, invalidCall(`"type" must be "toolCall", got %s`, quoteForMessage(env.typ.text))
	}
	if err := checkLabel("id", env.id, MaxIDBytes); err != nil {
		return ToolCall{}, err
	}
	if err := checkLabel("name", env.name, MaxNameBytes); err != nil {
		return ToolCall{}, err
	}
	switch env.args.kind {
	case kindInvalid:
		return ToolCall{}, invalidCall(`missing "arguments"`)
	case kindObject:
	default:
		return ToolCall{}, invalidCall(`"arguments" must be a JSON object, got %s`, env.args.kind)
	}
	return ToolCall{id: env.id.text, name: env.name.text, args: Arguments{canonical: env.args.text}}, nil
}

// checkLabel checks an id or a name (the rules are at ParseToolCall).
func checkLabel(field string, f envelopeField, maxBytes int) error {
	switch {
	case f.kind == kindInvalid:
		return invalidCall("missing %q", field)
	case f.kind != kindString:
		return invalidCall("%q must be a string, got %s", field, f.kind)
	case len(f.text) > maxBytes:
		return invalidCall("%q is %d bytes, limit %d", field, len(f.text), maxBytes)
	}
	blank := true
	for i, r := range f.text {
		switch {
		case r == utf8.RuneError && !validRuneAt(f.text, i):
			return invalidCall("%q is not valid UTF-8 (at byte %d)", field, i)
		case forbiddenInLabel(r):
			return invalidCall("%q contains control or invisible character %U at byte %d", field, r, i)
		case !unicode.IsSpace(r) && !blankLooking(r):
			blank = false
		}
	}
	if blank {
		return invalidCall("%q must not be blank", field)
	}
	return nil
}

// validRuneAt reports whether the U+FFFD decoded at s[i] was really there (not a decoding error).
func validRuneAt(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size == 3
}

// blankLooking is the fixed list of code points that draw nothing by themselves: a label made only
// of them (and white space) is blank. They are allowed beside visible characters ("e" + U+0301 is
// "é"). Like forbiddenInLabel, the list is fixed rather than read from Go's Unicode tables, so a
// recorded call's verdict never changes under a newer Go. (Adding this rule changed no recorded
// verdict: every code point here is non-ASCII, and before call IDs were escaped into workflow IDs
// no Go worker could complete a workflow task for a workflow ID holding one.)
func blankLooking(r rune) bool {
	switch {
	case r >= 0x0300 && r <= 0x036F: // combining diacritical marks (U+034F combining grapheme joiner included)
		return true
	case r >= 0x1AB0 && r <= 0x1AFF, r >= 0x1DC0 && r <= 0x1DFF: // combining marks, extended and supplement
		return true
	case r >= 0x20D0 && r <= 0x20FF, r >= 0xFE20 && r <= 0xFE2F: // combining marks for symbols, half marks
		return true
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF: // variation selectors
		return true
	case r >= 0x180B && r <= 0x180F: // Mongolian free variation selectors
		return true
	case r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0: // Hangul fillers
		return true
	case r == 0x17B4, r == 0x17B5: // Khmer inherent vowels (invisible)
		return true
	case r == 0x2800: // Braille pattern blank
		return true
	case r >= 0x1D173 && r <= 0x1D17A: // musical symbol format characters
		return true
	}
	return false
}

// forbiddenInLabel is the fixed list of code points an id or name must not hold.
func forbiddenInLabel(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7F && r <= 0x9F: // C0, DEL, C1
		return true
	case r == 0x00AD, r == 0x061C, r == 0x180E: // soft hyphen, Arabic letter mark, Mongolian vowel separator
		return true
	case r >= 0x200B && r <= 0x200F: // zero-width space/joiners, LRM, RLM
		return true
	case r >= 0x2028 && r <= 0x202E: // line and paragraph separators, bidi embeddings and overrides
		return true
	case r >= 0x2060 && r <= 0x206F: // word joiner, invisible operators, bidi isolates
		return true
	case r == 0xFEFF, r >= 0xFFF9 && r <= 0xFFFB: // BOM, interlinear annotations
		return true
	case r >= 0xE0000 && r <= 0xE007F: // tag characters (invisible ASCII look-alikes)
		return true
	}
	return false
}

// NewToolCall builds a call for Go callers; arguments is the JSON object of arguments. It applies
// the rules of ParseToolCall (id and name must also be valid UTF-8), and the encoded call must fit
// MaxCallBytes, so ParseToolCall accepts what MarshalJSON returns.
func NewToolCall(id, name string, arguments []byte) (ToolCall, error) {
	if err := checkLabel("id", envelopeField{kind: kindString, text: id}, MaxIDBytes); err != nil {
		return ToolCall{}, err
	}
	if err := checkLabel("name", envelopeField{kind: kindString, text: name}, MaxNameBytes); err != nil {
		return ToolCall{}, err
	}
	if len(arguments) > MaxCallBytes {
		return ToolCall{}, invalidCall("arguments are %d bytes, limit %d", len(arguments), MaxCallBytes)
	}
	canonical, err := canonicalObject(arguments, "arguments", MaxArgumentsDepth)
	if err != nil {
		return ToolCall{}, invalidCall("%v", err)
	}
	c := ToolCall{id: id, name: name, args: Arguments{canonical: canonical}}
	if n := c.encodedLen(); n > MaxCallBytes {
		return ToolCall{}, invalidCall("encodes to %d bytes, limit %d", n, MaxCallBytes)
	}
	return c, nil
}

func invalidCall(format string, args ...any) error {
	return &ContractError{Code: CodeInvalidToolCall, Message: "tool call: " + fmt.Sprintf(format, args...)}
}

func (c ToolCall) ID() string           { return c.id }
func (c ToolCall) Name() string         { return c.name }
func (c ToolCall) Arguments() Arguments { return c.args }

// IsZero reports whether c is the invalid zero value.
func (c ToolCall) IsZero() bool { return c.id == "" }

const (
	wireTypeValue = "toolCall"
	wireType      = `{"type":"toolCall","id":`
	wireName      = `,"name":`
	wireArguments = `,"arguments":`
)

func (c ToolCall) encodedLen() int {
	return len(wireType) + quotedLen(c.id) + len(wireName) + quotedLen(c.name) + len(wireArguments) +
		len(c.args.object()) + 1
}

// MarshalJSON encodes the wire shape with canonical arguments: fields in the order type, id, name,
// arguments, no whitespace, strings escaped as in the arguments. The output is never longer than
// the input the call was parsed from, and ParseToolCall of it gives c again. The zero ToolCall is
// an error.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	if c.IsZero() {
		return nil, invalidCall("cannot encode the zero ToolCall")
	}
	b := make([]byte, 0, c.encodedLen())
	b = append(b, wireType...)
	b = appendQuoted(b, c.id)
	b = append(b, wireName...)
	b = appendQuoted(b, c.name)
	b = append(b, wireArguments...)
	b = append(b, c.args.object()...)
	return append(b, '}'), nil
}

// UnmarshalJSON is ParseToolCall; on error c is unchanged.
func (c *ToolCall) UnmarshalJSON(data []byte) error {
	parsed, err := ParseToolCall(data)
	if err != nil {
		return err
	}
	*c = parsed
	return nil
}
