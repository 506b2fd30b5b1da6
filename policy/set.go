package policy

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cedar-policy/cedar-go"
)

// Bounds of a set: it comes from an operator's file, but its IDs and reasons reach results the
// model reads, logs and histories.
const (
	// MaxFileBytes bounds a policy file.
	MaxFileBytes = 1 << 20
	// MaxPolicies bounds the policies of a set.
	MaxPolicies = 10000
	// MaxIDBytes bounds an @id.
	MaxIDBytes = 128
	// MaxReasonBytes bounds a @reason.
	MaxReasonBytes = 512
)

// Annotations toolgate reads.
const (
	AnnotationID     = "id"
	AnnotationReason = "reason"
	AnnotationEffect = "effect"
	// EffectApprove is the one value of @effect: a forbid that asks a human instead of denying.
	EffectApprove = "approve"
)

// ErrEmpty is returned by Parse for a file with no policies: a set without a permit would deny
// every call, which is never what an empty file means.
var ErrEmpty = errors.New("policy: the file holds no policies")

// Set is a parsed, immutable Cedar policy set. It is safe for concurrent use.
type Set struct {
	hash     string
	name     string
	policies []entry
	// authz are the policies Cedar's allow/deny applies to (all but the approve ones), in file
	// order; approve are the @effect("approve") forbids, in file order.
	authz, approve policyList
	// byID indexes policies by ID.
	byID map[string]int
}

// entry is one policy of a Set.
type entry struct {
	id      string
	reason  string
	approve bool
	forbid  bool
	line    int
	p       *cedar.Policy
}

// Policy describes one policy of a Set.
type Policy struct {
	// ID is the @id annotation, else "policy<n>" by position.
	ID string
	// Effect is "permit", "forbid" or "approve" (a forbid with @effect("approve")).
	Effect string
	// Reason is the @reason annotation, if any.
	Reason string
	// Line is the line of the file the policy starts on (1-based).
	Line int
}

// Load reads and parses the policy file at path (see Parse).
func Load(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	defer f.Close()
	text, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("policy: read %s: %w", path, err)
	}
	return Parse(path, text)
}

// Parse parses text, a Cedar policy file named name (for error positions), into a Set. It
// refuses a file over MaxFileBytes, a Cedar syntax error (the error names the line and
// column), an empty file, duplicate or oversized @id, an oversized @reason or one holding
// control characters, an @effect other than "approve", and @effect("approve") on a permit.
func Parse(name string, text []byte) (*Set, error) {
	if len(text) > MaxFileBytes {
		return nil, fmt.Errorf("policy: %s is larger than %d bytes", name, MaxFileBytes)
	}
	if !utf8.Valid(text) {
		return nil, fmt.Errorf("policy: %s is not UTF-8", name)
	}
	list, err := cedar.NewPolicyListFromBytes(name, text)
	if err != nil {
		// The parser names the position "<input>:line:column".
		return nil, fmt.Errorf("policy: %s", strings.ReplaceAll(err.Error(), "<input>", name))
	}
	if len(list) == 0 {
		return nil, ErrEmpty
	}
	if len(list) > MaxPolicies {
		return nil, fmt.Errorf("policy: %s has %d policies, limit %d", name, len(list), MaxPolicies)
	}
	s := &Set{hash: hashBytes(text), name: name, byID: map[string]int{}}
	seen := s.byID
	for i, p := range list {
		pos := p.Position()
		e := entry{id: fmt.Sprintf("policy%d", i), forbid: p.Effect() == cedar.Forbid, line: pos.Line, p: p}
		where := fmt.Sprintf("%s:%d:%d", name, pos.Line, pos.Column)
		for k, v := range p.Annotations() {
			switch string(k) {
			case AnnotationID:
				if err := checkText(string(v), MaxIDBytes); err != nil || v == "" {
					return nil, fmt.Errorf("policy: %s: @id %q: %v", where, cutForError(string(v)), orEmpty(err))
				}
				e.id = string(v)
			case AnnotationReason:
				if err := checkText(string(v), MaxReasonBytes); err != nil {
					return nil, fmt.Errorf("policy: %s: @reason: %v", where, err)
				}
				e.reason = string(v)
			case AnnotationEffect:
				if string(v) != EffectApprove {
					return nil, fmt.Errorf("policy: %s: @effect(%q): the only effect is %q", where, cutForError(string(v)), EffectApprove)
				}
				if !e.forbid {
					return nil, fmt.Errorf("policy: %s: @effect(%q) is for a forbid (ask a human where it matches); a permit already allows", where, EffectApprove)
				}
				e.approve = true
			}
		}
		if prev, dup := seen[e.id]; dup {
			return nil, fmt.Errorf("policy: %s: policy ID %q is also the ID of policy %d", where, e.id, prev)
		}
		seen[e.id] = i
		s.policies = append(s.policies, e)
		if e.approve {
			s.approve = append(s.approve, listed{id: cedar.PolicyID(e.id), p: p, index: i})
		} else {
			s.authz = append(s.authz, listed{id: cedar.PolicyID(e.id), p: p, index: i})
		}
	}
	return s, nil
}

func orEmpty(err error) string {
	if err == nil {
		return "is empty"
	}
	return err.Error()
}

// checkText refuses text over limit bytes or holding control or invisible characters.
func checkText(s string, limit int) error {
	if len(s) > limit {
		return fmt.Errorf("%d bytes, limit %d", len(s), limit)
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return fmt.Errorf("holds the control or invisible character %U", r)
		}
	}
	return nil
}

// cutForError shortens s for an error message.
func cutForError(s string) string {
	if len(s) <= 64 {
		return s
	}
	end := 64
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "..."
}

// Hash identifies the set: "sha256:" + the hex SHA-256 of the file's bytes.
func (s *Set) Hash() string { return s.hash }

// Name is the file name the set was parsed from.
func (s *Set) Name() string { return s.name }

// Policies describes the set's policies in file order.
func (s *Set) Policies() []Policy {
	out := make([]Policy, len(s.policies))
	for i, e := range s.policies {
		effect := "permit"
		switch {
		case e.approve:
			effect = EffectApprove
		case e.forbid:
			effect = "forbid"
		}
		out[i] = Policy{ID: e.id, Effect: effect, Reason: e.reason, Line: e.line}
	}
	return out
}

// String is "<name> (<hash>, <n> policies)".
func (s *Set) String() string {
	return fmt.Sprintf("%s (%s, %d %s)", s.name, s.hash, len(s.policies), plural(len(s.policies), "policy", "policies"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
