package toolcore

import (
	"bytes"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is a small strict JSON scanner and canonicalizer for untrusted tool calls. It exists
// because encoding/json is lenient where the call boundary must not be: it accepts duplicate keys
// (last one wins), replaces lone surrogate escapes and invalid UTF-8 with U+FFFD, and has no
// nesting bound below 10000.
//
// Grammar: RFC 8259, exactly. No BOM, no comments, no trailing commas, no leading zeros, no NaN.
// Whitespace is space, tab, LF and CR only.
//
// Rejected although RFC 8259 tolerates them:
//   - a key twice in one object (compared after unescaping, so "a" and "\u0061" collide);
//   - invalid UTF-8 anywhere in a string (RFC 8259 section 8.1 requires UTF-8);
//   - a \uXXXX escape of a lone surrogate (not a Unicode scalar value, so no UTF-8 form exists);
//   - nesting deeper than the scanner's bound.
//
// Canonical form (the bytes Arguments holds):
//   - no insignificant whitespace;
//   - object members sorted by the byte order of their unescaped UTF-8 keys (= code point order;
//     RFC 8785 sorts by UTF-16 code units, which differs only between keys with U+E000-U+FFFF and
//     keys with supplementary characters at the same position);
//   - number literals copied exactly as sent;
//   - strings escaped minimally, as RFC 8785 (JCS) and ECMAScript JSON.stringify do: `"` and `\`
//     as \" and \\, U+0008, U+0009, U+000A, U+000C, U+000D as \b \t \n \f \r, the other code
//     points below U+0020 as \u00xx (lowercase hex), everything else (including U+007F, U+2028,
//     U+2029, '<', '>', '&' and '/') as raw UTF-8.
//
// Minimal escaping makes the canonical form never longer than the input it came from (every escape
// it writes, the input had to write too), so a snapshot is never larger than the call it was taken
// from. Unlike encoding/json it does not escape U+2028/U+2029 or HTML characters: those escapes
// exist for embedding JSON in JavaScript source and HTML, which these bytes never are.

// jsonKind is the kind of a JSON value, named in messages.
type jsonKind uint8

const (
	kindInvalid jsonKind = iota
	kindObject
	kindArray
	kindString
	kindNumber
	kindBool
	kindNull
)

func (k jsonKind) String() string {
	switch k {
	case kindObject:
		return "object"
	case kindArray:
		return "array"
	case kindString:
		return "string"
	case kindNumber:
		return "number"
	case kindBool:
		return "boolean"
	case kindNull:
		return "null"
	default:
		return "invalid JSON"
	}
}

// kindOf returns the kind of the value starting with c.
func kindOf(c byte) jsonKind {
	switch c {
	case '{':
		return kindObject
	case '[':
		return kindArray
	case '"':
		return kindString
	case 't', 'f':
		return kindBool
	case 'n':
		return kindNull
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return kindNumber
	default:
		return kindInvalid
	}
}

// jsonError is a scanner failure; msg is complete and bounded. Callers prefix it ("tool call: ").
type jsonError struct {
	msg string
	// wellFormed: the text may still be JSON (a duplicate key, too deep), as opposed to a syntax,
	// UTF-8 or surrogate error.
	wellFormed bool
}

func (e *jsonError) Error() string { return e.msg }

// pathSeg is one step of the scanner's location: an object key or an array index.
type pathSeg struct {
	key   []byte
	index int
	isIdx bool
}

// member is one scanned object member: its unescaped key and where its canonical `"key":value`
// sits in the output.
type member struct {
	key        []byte
	start, end int
}

// scanner validates and canonicalizes one JSON text. It is used once; its buffers are reused
// across the values of that text.
type scanner struct {
	data     []byte
	pos      int
	depth    int
	maxDepth int
	// of names the input in offset messages: "" for a whole call, e.g. " of arguments" otherwise.
	of      string
	members []member  // stack of members of the objects being scanned
	path    []pathSeg // stack of keys and indexes leading to the current value
	scratch []byte    // unescaped string contents, reused
}

const maxMessageQuote = 64 // bytes of untrusted text quoted in one message

func (s *scanner) syntaxError(at int, format string, args ...any) error {
	return &jsonError{msg: fmt.Sprintf("invalid JSON at byte %d%s: %s", at, s.of, fmt.Sprintf(format, args...))}
}

// found describes what is at offset i, for syntax messages.
func (s *scanner) found(i int) string {
	if i >= len(s.data) {
		return "end of input"
	}
	c := s.data[i]
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (s *scanner) skipWS() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value appends the canonical form of the value at s.pos to dst.
func (s *scanner) value(dst []byte) ([]byte, error) {
	if s.pos >= len(s.data) {
		return dst, s.syntaxError(s.pos, "unexpected end of input, want a value")
	}
	switch c := s.data[s.pos]; c {
	case '{', '[':
		s.depth++
		if s.depth > s.maxDepth {
			return dst, &jsonError{msg: fmt.Sprintf("%s nests deeper than %d levels (at byte %d%s)",
				render(s.path[:min(1, len(s.path))]), s.maxDepth, s.pos, s.of), wellFormed: true}
		}
		var err error
		if c == '{' {
			dst, err = s.object(dst)
		} else {
			dst, err = s.array(dst)
		}
		s.depth--
		return dst, err
	case '"':
		str, _, err := s.str()
		if err != nil {
			return dst, err
		}
		return appendQuoted(dst, str), nil
	case 't':
		return s.literal(dst, "true")
	case 'f':
		return s.literal(dst, "false")
	case 'n':
		return s.literal(dst, "null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return s.number(dst)
	default:
		return dst, s.syntaxError(s.pos, "unexpected %s, want a value", s.found(s.pos))
	}
}

func (s *scanner) literal(dst []byte, lit string) ([]byte, error) {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(lit)) {
		return dst, s.syntaxError(s.pos, "invalid literal, want %s", lit)
	}
	s.pos += len(lit)
	return append(dst, lit...), nil
}

// number copies a number literal after checking it against the RFC 8259 grammar.
func (s *scanner) number(dst []byte) ([]byte, error) {
	d, start := s.data, s.pos
	i := start
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		return dst, s.syntaxError(i, "unexpected %s in number, want a digit", s.found(i))
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !isDigit(d[i]) {
			return dst, s.syntaxError(i, "unexpected %s after decimal point, want a digit", s.found(i))
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return dst, s.syntaxError(i, "unexpected %s in exponent, want a digit", s.found(i))
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	s.pos = i
	return append(dst, d[start:i]...), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// str scans the string at s.pos and returns its unescaped contents. A plain-ASCII string without
// escapes aliases the input; any other is decoded into s.scratch, valid until the next call
// (escaped reports which, so callers that keep it can copy).
func (s *scanner) str() (contents []byte, escaped bool, err error) {
	d := s.data
	start := s.pos + 1
	i := start
	for i < len(d) && plainASCII(d[i]) {
		i++
	}
	if i < len(d) && d[i] == '"' {
		s.pos = i + 1
		return d[start:i], false, nil
	}
	if n := skipString(d, start-1) - start; cap(s.scratch) < n {
		s.scratch = make([]byte, 0, n) // an upper bound of the decoded length
	}
	buf, end, fault, at := decodeString(d, i, append(s.scratch[:0], d[start:i]...), false)
	switch fault {
	case faultNone:
		s.pos = end
		s.scratch = buf
		return buf, true, nil
	case faultControl:
		err = s.syntaxError(at, "control character U+%04X in string, want it escaped", d[at])
	case faultEscape:
		err = s.syntaxError(at, "invalid escape %s in string", s.found(at+1))
	case faultHex:
		err = s.syntaxError(at, "invalid \\u escape in string, want 4 hex digits")
	case faultSurrogate:
		err = &jsonError{msg: fmt.Sprintf("lone surrogate %s at byte %d%s (not a Unicode character)",
			d[at:at+6], at, s.of)}
	case faultUTF8:
		err = &jsonError{msg: fmt.Sprintf("invalid UTF-8 at byte %d%s", at, s.of)}
	default:
		err = s.syntaxError(at, "unexpected end of input in string")
	}
	return nil, false, err
}

// stringFault is what decodeString stopped at, or faultNone.
type stringFault uint8

const (
	faultNone      stringFault = iota
	faultEnd                   // the input ended before the closing quote
	faultControl               // an unescaped control character
	faultEscape                // a backslash that starts no escape
	faultHex                   // \u without four hex digits
	faultSurrogate             // a lone surrogate (U+FFFD when lenient)
	faultUTF8                  // invalid UTF-8 (U+FFFD when lenient)
)

// decodeString appends to buf the decoded contents of the JSON string whose body continues at
// d[i] (anywhere past its opening quote) and returns them with the offset just past the closing
// quote. It is the one escape decoder. Strict, it stops at the first fault with its offset;
// lenient, it replaces invalid UTF-8 and lone surrogates with U+FFFD, as encoding/json does.
func decodeString[S ~string | ~[]byte](d S, i int, buf []byte, lenient bool) (out []byte, end int, fault stringFault, at int) {
	for i < len(d) {
		c := d[i]
		switch {
		case c == '"':
			return buf, i + 1, faultNone, 0
		case c == '\\':
			if i+1 >= len(d) {
				return buf, 0, faultEnd, i + 1
			}
			if e := simpleEscape(d[i+1]); e != 0 {
				buf = append(buf, e)
				i += 2
				continue
			}
			if d[i+1] != 'u' {
				return buf, 0, faultEscape, i
			}
			r, n, f, fAt := unicodeEscape(d, i)
			switch {
			case f == faultSurrogate && lenient:
				r = utf8.RuneError
			case f != faultNone:
				return buf, 0, f, fAt
			}
			buf = utf8.AppendRune(buf, r)
			i += n
		case c < 0x20:
			return buf, 0, faultControl, i
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(d) && plainASCII(d[j]) {
				j++
			}
			buf = append(buf, d[i:j]...)
			i = j
		default:
			r, size := utf8.DecodeRuneInString(string(d[i:min(i+utf8.UTFMax, len(d))]))
			if r == utf8.RuneError && size == 1 {
				if !lenient {
					return buf, 0, faultUTF8, i
				}
				buf = utf8.AppendRune(buf, utf8.RuneError)
			} else {
				buf = append(buf, d[i:i+size]...)
			}
			i += size
		}
	}
	return buf, 0, faultEnd, i
}

// plainASCII reports whether c stands for itself inside a JSON string.
func plainASCII(c byte) bool { return c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' }

// unicodeEscape decodes the \uXXXX at d[i] (a surrogate pair takes two escapes) and returns the
// rune and the number of input bytes used, or the fault and its offset. A lone surrogate uses 6
// bytes, so a lenient caller can replace it and go on.
func unicodeEscape[S ~string | ~[]byte](d S, i int) (r rune, n int, fault stringFault, at int) {
	r, ok := hex4(d, i+2)
	if !ok {
		return 0, 0, faultHex, i
	}
	switch {
	case r >= 0xDC00 && r <= 0xDFFF:
		return 0, 6, faultSurrogate, i
	case r >= 0xD800 && r <= 0xDBFF:
		j := i + 6
		if j+1 < len(d) && d[j] == '\\' && d[j+1] == 'u' {
			lo, ok := hex4(d, j+2)
			if !ok {
				return 0, 0, faultHex, j
			}
			if lo >= 0xDC00 && lo <= 0xDFFF {
				return utf16Pair(r, lo), 12, faultNone, 0
			}
		}
		return 0, 6, faultSurrogate, i
	default:
		return r, 6, faultNone, 0
	}
}

func utf16Pair(hi, lo rune) rune { return 0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00) }

// hex4 reads four hex digits at d[i:].
func hex4[S ~string | ~[]byte](d S, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	var r rune
	for j := i; j < i+4; j++ {
		c := d[j]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// eachMember scans the object at s.pos (its '{'), calling member once per member with the
// unescaped key (owned by the caller) and s.pos at the member's value, which member must consume.
// It stops after the closing '}' or at the first error. It is the one member loop of the scanner:
// object and the tool call's envelope both use it.
func (s *scanner) eachMember(member func(key []byte) error) error {
	s.pos++ // '{'
	s.skipWS()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	for {
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return s.syntaxError(s.pos, "unexpected %s, want a string key", s.found(s.pos))
		}
		key, escaped, err := s.str()
		if err != nil {
			return err
		}
		if escaped {
			key = bytes.Clone(key)
		}
		s.skipWS()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.syntaxError(s.pos, "unexpected %s after object key, want ':'", s.found(s.pos))
		}
		s.pos++
		s.skipWS()
		if s.pos >= len(s.data) {
			return s.syntaxError(s.pos, "unexpected end of input, want a value")
		}
		if err := member(key); err != nil {
			return err
		}
		s.skipWS()
		if s.pos < len(s.data) && s.data[s.pos] == ',' {
			s.pos++
			s.skipWS()
			continue
		}
		if s.pos < len(s.data) && s.data[s.pos] == '}' {
			s.pos++
			return nil
		}
		return s.syntaxError(s.pos, "unexpected %s after object member, want ',' or '}'", s.found(s.pos))
	}
}

// object appends the canonical form of the object at s.pos: members sorted by unescaped key,
// duplicates rejected.
func (s *scanner) object(dst []byte) ([]byte, error) {
	open := len(dst)
	dst = append(dst, '{')
	base := len(s.members)
	err := s.eachMember(func(key []byte) error {
		if len(s.members) > base {
			dst = append(dst, ',')
		}
		start := len(dst)
		dst = appendQuoted(dst, key)
		dst = append(dst, ':')
		s.path = append(s.path, pathSeg{key: key})
		var err error
		if dst, err = s.value(dst); err != nil {
			return err
		}
		s.path = s.path[:len(s.path)-1]
		s.members = append(s.members, member{key: key, start: start, end: len(dst)})
		return nil
	})
	if err != nil {
		return dst, err
	}
	ms := s.members[base:]
	if !membersSorted(ms) {
		if dup := sortMembers(ms); dup != nil {
			return dst, &jsonError{msg: fmt.Sprintf("duplicate key %s in %s", quoteForMessage(dup), s.where()),
				wellFormed: true}
		}
		body := bytes.Clone(dst[open+1:])
		dst = dst[:open+1]
		for i, m := range ms {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, body[m.start-open-1:m.end-open-1]...)
		}
	}
	s.members = s.members[:base]
	return append(dst, '}'), nil
}

// membersSorted reports whether keys are strictly increasing (sorted and without duplicates).
func membersSorted(ms []member) bool {
	for i := 1; i < len(ms); i++ {
		if bytes.Compare(ms[i-1].key, ms[i].key) >= 0 {
			return false
		}
	}
	return true
}

// sortMembers sorts ms by key and returns a key that occurs twice, or nil.
func sortMembers(ms []member) (duplicate []byte) {
	slices.SortFunc(ms, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	for i := 1; i < len(ms); i++ {
		if bytes.Equal(ms[i-1].key, ms[i].key) {
			return ms[i].key
		}
	}
	return nil
}

func (s *scanner) array(dst []byte) ([]byte, error) {
	dst = append(dst, '[')
	s.pos++
	s.skipWS()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return append(dst, ']'), nil
	}
	for n := 0; ; n++ {
		if n > 0 {
			dst = append(dst, ',')
		}
		s.path = append(s.path, pathSeg{index: n, isIdx: true})
		var err error
		dst, err = s.value(dst)
		if err != nil {
			return dst, err
		}
		s.path = s.path[:len(s.path)-1]
		s.skipWS()
		if s.pos < len(s.data) && s.data[s.pos] == ',' {
			s.pos++
			s.skipWS()
			continue
		}
		if s.pos < len(s.data) && s.data[s.pos] == ']' {
			s.pos++
			return append(dst, ']'), nil
		}
		return dst, s.syntaxError(s.pos, "unexpected %s after array element, want ',' or ']'", s.found(s.pos))
	}
}

// where renders s.path for messages, e.g. `arguments.point`, `arguments.items[2]`,
// `arguments["a b"]`; "the tool call" at the top. It is bounded in length.
func (s *scanner) where() string { return render(s.path) }

func render(path []pathSeg) string {
	if len(path) == 0 {
		return "the tool call"
	}
	const maxPath = 160
	var b strings.Builder
	for i, seg := range path {
		if b.Len() > maxPath {
			b.WriteString("...")
			break
		}
		switch {
		case seg.isIdx:
			b.WriteString("[" + strconv.Itoa(seg.index) + "]")
		case isIdentifier(seg.key):
			if i > 0 {
				b.WriteByte('.')
			}
			b.Write(seg.key)
		default:
			b.WriteString("[" + quoteForMessage(seg.key) + "]")
		}
	}
	return b.String()
}

func isIdentifier(key []byte) bool {
	if len(key) == 0 || len(key) > maxMessageQuote {
		return false
	}
	for i, c := range key {
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (i == 0 || !isDigit(c)) {
			return false
		}
	}
	return true
}

// quoteForMessage quotes untrusted text for a message: at most maxMessageQuote bytes (cut on a
// rune boundary, "..." appended), Go-quoted so control and invisible characters show as escapes.
func quoteForMessage[S ~string | ~[]byte](text S) string {
	str := string(text)
	if len(str) > maxMessageQuote {
		cut := maxMessageQuote
		for cut > 0 && !utf8.RuneStart(str[cut]) {
			cut--
		}
		return strconv.Quote(str[:cut]) + "..."
	}
	return strconv.Quote(str)
}

// appendQuoted appends text (valid UTF-8) as a canonical JSON string (see the top of this file).
func appendQuoted[S ~string | ~[]byte](dst []byte, text S) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, text[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, text[start:]...)
	return append(dst, '"')
}

// quotedLen is len(appendQuoted(nil, text)).
func quotedLen(text string) int {
	n := len(text) + 2
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}

// malformed returns the syntax error of the value at s.pos, if it has one: a value that is not
// the object it should be is better named by its kind than by a duplicate key or its depth.
func (s *scanner) malformed() error {
	_, err := s.value(nil)
	if e, ok := err.(*jsonError); ok && e.wellFormed {
		return nil
	}
	return err
}

// canonicalObject checks that data is one JSON object within maxDepth levels and returns its
// canonical form. root names it in messages (e.g. "arguments").
func canonicalObject(data []byte, root string, maxDepth int) (string, error) {
	s := scanner{data: data, maxDepth: maxDepth, of: " of " + root}
	s.path = append(s.path, pathSeg{key: []byte(root)})
	s.skipWS()
	if s.pos >= len(data) {
		return "", &jsonError{msg: root + " must be a JSON object, got empty input"}
	}
	if k := kindOf(data[s.pos]); k != kindObject {
		if err := s.malformed(); err != nil {
			return "", err
		}
		return "", &jsonError{msg: fmt.Sprintf("%s must be a JSON object, got %s", root, k)}
	}
	out, err := s.value(make([]byte, 0, len(data)))
	if err != nil {
		return "", err
	}
	s.skipWS()
	if s.pos < len(data) {
		return "", s.syntaxError(s.pos, "unexpected %s after the object", s.found(s.pos))
	}
	return string(out), nil
}

// The functions below read canonical JSON (produced above, so trusted: valid, no whitespace) and
// never fail on it.

// members yields the unescaped key and the canonical value of each member of the canonical object
// obj, in (sorted) order.
func members(obj string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		i := 1
		if i >= len(obj) || obj[i] == '}' {
			return
		}
		for {
			kEnd := skipValue(obj, i)
			key := unquote(obj[i:kEnd])
			vEnd := skipValue(obj, kEnd+1) // past ':'
			if !yield(key, obj[kEnd+1:vEnd]) {
				return
			}
			if vEnd >= len(obj) || obj[vEnd] != ',' {
				return
			}
			i = vEnd + 1
		}
	}
}

// elements yields the canonical value of each element of the canonical array arr.
func elements(arr string) iter.Seq[string] {
	return func(yield func(string) bool) {
		i := 1
		if i >= len(arr) || arr[i] == ']' {
			return
		}
		for {
			end := skipValue(arr, i)
			if !yield(arr[i:end]) {
				return
			}
			if end >= len(arr) || arr[end] != ',' {
				return
			}
			i = end + 1
		}
	}
}

// skipValue returns the offset just past the JSON value starting at c[i] (or len(c)). c must be
// valid JSON from i on (canonical JSON, or a json.RawMessage that json.Valid accepted); a scalar
// ends at a delimiter or whitespace.
func skipValue[S ~string | ~[]byte](c S, i int) int {
	switch c[i] {
	case '"':
		return skipString(c, i)
	case '{', '[':
		depth := 0
		for i < len(c) {
			switch c[i] {
			case '"':
				i = skipString(c, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default:
		for i < len(c) {
			switch c[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// skipString returns the offset just past the string starting at c[i] (or len(c)).
func skipString[S ~string | ~[]byte](c S, i int) int {
	for i++; i < len(c); i++ {
		switch c[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// unquote returns the contents of the valid JSON string literal q (quotes included): canonical
// JSON, or a string of a json.RawMessage that json.Valid accepted. Invalid UTF-8 and \u escapes of
// lone surrogates become U+FFFD, as encoding/json decodes them (canonical strings have neither).
func unquote[S ~string | ~[]byte](q S) string {
	body := string(q[1 : len(q)-1])
	if strings.IndexByte(body, '\\') < 0 {
		return serValidUTF8(body)
	}
	buf, _, _, _ := decodeString(q, 1, make([]byte, 0, len(body)), true)
	return string(buf)
}

// simpleEscape returns the byte that the one-character escape \e stands for, or 0 if e does not
// start one (\u is not a one-character escape).
func simpleEscape(e byte) byte {
	switch e {
	case '"', '\\', '/':
		return e
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return 0
}
