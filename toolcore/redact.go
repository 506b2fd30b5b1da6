package toolcore

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// RedactionMarker returns what replaces the value of the secret name: "[REDACTED:<name>]".
func RedactionMarker(name string) string { return "[REDACTED:" + name + "]" }

// minPartialRedaction is the shortest prefix of a secret's form that Redact replaces where a
// bound cut a text (before TruncationMarker or ErrorTextEllipsis): a cut through a secret must
// not leave its first half readable. At the bare end of a text, which may or may not have been
// cut, a prefix must be at least MinSecretBytes long, so ordinary endings are left alone.
const minPartialRedaction = 4

// redactor replaces the forms of every value added: as it is, URL-escaped (query and path),
// base64 (standard and URL alphabets, padded and not) and JSON-escaped. "Bearer <value>" and
// "Basic" headers of the value alone are covered by the value and its base64 forms.
type redactor struct {
	forms []redactForm // longest first: at each position the longest form wins
	rep   *strings.Replacer
}

type redactForm struct {
	form, marker string
	border       []int // border[i]: the longest proper border of form[:i+1] (KMP), for overlap
}

func (r *redactor) add(name, v string) {
	marker := RedactionMarker(name)
	forms := []string{
		v,
		url.QueryEscape(v),
		url.PathEscape(v),
		base64.StdEncoding.EncodeToString([]byte(v)),
		base64.URLEncoding.EncodeToString([]byte(v)),
		base64.RawStdEncoding.EncodeToString([]byte(v)),
		base64.RawURLEncoding.EncodeToString([]byte(v)),
		jsonEscaped(v),
		jsonEscaped(jsonEscaped(v)), // a JSON string inside a JSON string (an error body in a result)
	}
	for _, f := range forms {
		if !slices.ContainsFunc(r.forms, func(x redactForm) bool { return x.form == f }) {
			r.forms = append(r.forms, redactForm{form: f, marker: marker, border: borders(f)})
		}
	}
	slices.SortStableFunc(r.forms, func(a, b redactForm) int { return len(b.form) - len(a.form) })
	pairs := make([]string, 0, 2*len(r.forms))
	for _, f := range r.forms {
		pairs = append(pairs, f.form, f.marker)
	}
	r.rep = strings.NewReplacer(pairs...)
}

// jsonEscaped is s as it appears between the quotes of a JSON string (the serializer's quoting:
// no HTML escaping).
func jsonEscaped(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	q := strings.TrimSuffix(b.String(), "\n")
	return q[1 : len(q)-1]
}

// redact replaces every form, then a cut-off prefix of a form where the text was cut.
func (r *redactor) redact(s string) string {
	if r.rep == nil || s == "" {
		return s
	}
	s = r.rep.Replace(s)
	for _, cut := range []string{TruncationMarker, ErrorTextEllipsis} {
		if body, ok := strings.CutSuffix(s, cut); ok {
			red, _ := r.redactTail(body, minPartialRedaction)
			return red + cut
		}
	}
	red, _ := r.redactTail(s, MinSecretBytes)
	return red
}

// redactTail replaces the longest proper prefix (at least least bytes) of a form that s ends
// with. Each form costs O(len(form)+len(s)) (a KMP automaton), whatever the overlap.
func (r *redactor) redactTail(s string, least int) (string, bool) {
	best, marker := 0, ""
	for _, f := range r.forms {
		if n := f.overlap(s); n >= least && n > best {
			best, marker = n, f.marker
		}
	}
	if best == 0 {
		return s, false
	}
	return s[:len(s)-best] + marker, true
}

// borders is the KMP failure table of form.
func borders(form string) []int {
	pi := make([]int, len(form))
	for i, k := 1, 0; i < len(form); i++ {
		for k > 0 && form[i] != form[k] {
			k = pi[k-1]
		}
		if form[i] == form[k] {
			k++
		}
		pi[i] = k
	}
	return pi
}

// overlap returns the length of the longest proper prefix of the form that s ends with.
func (f redactForm) overlap(s string) int {
	form, pi := f.form, f.border
	if len(form) < 2 {
		return 0
	}
	if len(s) > len(form) {
		s = s[len(s)-len(form):]
	}
	k := 0
	for i := 0; i < len(s); i++ {
		for k > 0 && s[i] != form[k] {
			k = pi[k-1]
		}
		if s[i] == form[k] {
			k++
		}
		if k == len(form) {
			k = pi[k-1]
		}
	}
	return k
}

// Redact replaces every value s holds, in each of its forms, with RedactionMarker(name); a
// prefix of a form where a bound cut the text (before TruncationMarker or ErrorTextEllipsis, at
// least 4 bytes; at the text's bare end, at least MinSecretBytes) too. Texts an attempt reports pass through it before they leave the
// executor: result content, error messages, progress, checkpoints, log lines.
func (s *Secrets) Redact(text string) string {
	if s == nil {
		return text
	}
	return s.red.redact(text)
}

// RedactResult returns r with every value s holds redacted from its content, still within the
// contract's bounds: an error result keeps its code and a complete JSON body; a success result is
// capped again.
func (s *Secrets) RedactResult(call ToolCall, r Result) Result {
	if s.Len() == 0 || r.IsZero() {
		return r
	}
	if r.IsError() {
		msg := r.ErrorMessage()
		if red := s.Redact(msg); red != msg {
			return ErrorResult(call, r.ErrorCode(), red)
		}
		return r
	}
	if red := s.Redact(r.Content()); red != r.Content() {
		return SuccessResult(call, red)
	}
	return r
}

// RedactErrorText is ErrorText(err) with every value s holds redacted.
func (s *Secrets) RedactErrorText(err error) string {
	return s.Redact(ErrorText(err))
}

// RedactProgress returns p with its message redacted.
func (s *Secrets) RedactProgress(p Progress) Progress {
	p.Message = s.Redact(p.Message)
	return p
}

// RedactCheckpoint returns raw with every value s holds redacted, and false when the redacted
// text is no longer valid JSON (a secret written as a bare number): the checkpoint is then
// dropped rather than kept with the value.
func (s *Secrets) RedactCheckpoint(raw json.RawMessage) (json.RawMessage, bool) {
	if s.Len() == 0 {
		return raw, true
	}
	red := s.Redact(string(raw))
	if red == string(raw) {
		return raw, true
	}
	if !json.Valid([]byte(red)) {
		return nil, false
	}
	return json.RawMessage(red), true
}
