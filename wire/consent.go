package wire

import "time"

// ErrTypeConsentRequired is the non-retryable ApplicationError type of an ExecuteTool attempt
// that did not run its tool because the call's principal has no valid token for a provider the
// tool declares (toolcore.Options.Credentials). Its one detail is a [ConsentRequest]. The
// workflow then waits for the consent (SignalConsent, or the ConsentTimeout) and schedules the
// tool again: the attempt did nothing.
const ErrTypeConsentRequired = "ConsentRequired"

// ConsentRequest is what a principal must consent to before the call's tool may run: the
// authorization URL of the provider (OAuth 2.1 authorization code with PKCE), for the scopes
// named. The URL holds no secret (the PKCE verifier stays in the worker's credential store) but
// it is a capability: whoever completes it links their account at the provider to the call's
// principal, until it expires.
type ConsentRequest struct {
	Provider string    `json:"provider"`
	Scopes   []string  `json:"scopes,omitempty"`
	URL      string    `json:"url"`
	Expires  time.Time `json:"expires"`
}

// Names of a call's wait for consent.
const (
	// SignalConsent wakes a call waiting for consent: the consent endpoint signals every call of
	// the principal that waits for the provider once it has stored the token. Its one argument
	// is a [ConsentSignal]. A signal for another provider, or a spurious one, makes the call
	// try once more: no token, and it waits again.
	SignalConsent = "toolgate.consent"
	// QueryConsent returns the call's [ConsentState].
	QueryConsent = "toolgate.consent"
	// OutcomeAwaitingConsent is ToolOutcome while a call waits for its principal's consent.
	OutcomeAwaitingConsent = "awaiting_consent"
	// ChangeConsent is the change ID of the consent wait in workflow code.
	ChangeConsent = "toolgate-consent"
)

// ConsentSignal is the argument of SignalConsent.
type ConsentSignal struct {
	Provider string `json:"provider"`
	// Refused is the provider's error code when the principal refused consent
	// ("access_denied"): the call then ends TOOL_EXECUTION_FAILED saying so, without running.
	// Empty when consent was given.
	Refused string `json:"refused,omitempty"`
}

// ConsentState is a call's wait for consent: Waiting while it waits, the request shown to whoever
// can get the principal to consent (toolgate status, the Web UI's current details, MCP's URL
// elicitation), since and until when.
type ConsentState struct {
	Waiting  bool           `json:"waiting"`
	Request  ConsentRequest `json:"request"`
	Since    time.Time      `json:"since"`
	Deadline time.Time      `json:"deadline"`
}
