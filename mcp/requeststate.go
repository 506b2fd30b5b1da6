package mcp

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The requestState of a 2026-07-28 input_required result (SEP-2322) names the waiting call and
// its round, so the client's retry answers that round of that call. The client holds it, so it is
// integrity-protected: base64url(JSON) "." base64url(HMAC-SHA256(key, domain "." JSON part)), the
// JSON naming the workflow ID, the round, the tool, a hash of the principal that was asked and
// when the state expires. It is not secret (the client may read what it names) and not
// single-use: a retry of the same state is a retry of the same answer, which the call refuses
// once the round has moved on.

// RequestStateKeyBytes is the least length of Options.RequestStateKey.
const RequestStateKeyBytes = 32

// DefaultRequestStateTTL is the default of Options.RequestStateTTL.
const DefaultRequestStateTTL = time.Hour

// maxRequestStateBytes bounds a requestState a client sends back (what the server issues is a
// few hundred bytes).
const maxRequestStateBytes = 2048

// requestStateDomain separates this MAC from any other use of the key.
const requestStateDomain = "toolgate/mcp/requestState/v1"

// Refusals of a requestState; each is a -32602 error naming the reason.
var (
	errStateMalformed = errors.New("requestState is malformed or fails its integrity check (it was not issued by this server, or was changed)")
	errStateExpired   = errors.New("requestState has expired: call the tool again (with the same idempotency key to attach to the waiting call)")
	errStateForeign   = errors.New("requestState was issued to another principal")
	errStateOtherTool = errors.New("requestState was issued for another tool")
)

// requestState is what a requestState names.
type requestState struct {
	WorkflowID string `json:"w"`
	Round      int    `json:"r"`
	Tool       string `json:"t"`
	// Principal is principalTag of the principal asked.
	Principal string `json:"p"`
	// Expires is when the state stops being accepted, in Unix seconds.
	Expires int64 `json:"e"`
}

// requestStates issues and checks requestStates with one key.
type requestStates struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

// newRequestStates returns the states of key (a random key when nil) that live at most ttl
// (DefaultRequestStateTTL when not positive).
func newRequestStates(key []byte, ttl time.Duration) (*requestStates, error) {
	if key == nil {
		key = make([]byte, RequestStateKeyBytes)
		_, _ = rand.Read(key) // crypto/rand.Read never fails
	}
	if len(key) < RequestStateKeyBytes {
		return nil, fmt.Errorf("a requestState key has at least %d bytes, this one %d", RequestStateKeyBytes, len(key))
	}
	if ttl <= 0 {
		ttl = DefaultRequestStateTTL
	}
	return &requestStates{key: append([]byte(nil), key...), ttl: ttl, now: time.Now}, nil
}

// principalTag is a principal key's tag in a requestState: 16 bytes of its SHA-256, so the state
// binds the principal without showing its issuer and subject.
func principalTag(principal string) string {
	sum := sha256.Sum256([]byte("toolgate/mcp/principal\n" + principal))
	return hex.EncodeToString(sum[:16])
}

// issue returns the requestState of round of workflowID's call of tool, asked of principal,
// expiring at the round's deadline or after the TTL, whichever is sooner.
func (s *requestStates) issue(workflowID string, round int, tool, principal string, deadline time.Time) string {
	expires := s.now().Add(s.ttl)
	if !deadline.IsZero() && deadline.Before(expires) {
		expires = deadline
	}
	data, _ := json.Marshal(requestState{WorkflowID: workflowID, Round: round, Tool: tool,
		Principal: principalTag(principal), Expires: expires.Unix()})
	payload := base64.RawURLEncoding.EncodeToString(data)
	return payload + "." + base64.RawURLEncoding.EncodeToString(s.mac(payload))
}

func (s *requestStates) mac(payload string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(requestStateDomain + "." + payload))
	return m.Sum(nil)
}

// open checks state and returns what it names: refused when malformed, changed or issued with
// another key, expired, issued to another principal or for another tool.
func (s *requestStates) open(state, tool, principal string) (requestState, error) {
	if len(state) > maxRequestStateBytes {
		return requestState{}, errStateMalformed
	}
	payload, sig, ok := strings.Cut(state, ".")
	if !ok {
		return requestState{}, errStateMalformed
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(payload)) {
		return requestState{}, errStateMalformed
	}
	data, err := base64.RawURLEncoding.DecodeString(payload)
	var st requestState
	if err != nil || json.Unmarshal(data, &st) != nil || st.WorkflowID == "" || st.Round < 1 {
		return requestState{}, errStateMalformed
	}
	switch {
	case !s.now().Before(time.Unix(st.Expires, 0)):
		return requestState{}, errStateExpired
	case !hmac.Equal([]byte(st.Principal), []byte(principalTag(principal))):
		return requestState{}, errStateForeign
	case st.Tool != tool:
		return requestState{}, errStateOtherTool
	}
	return st, nil
}
