package toolcore

import (
	"context"
	"time"
)

// CredentialSource obtains a principal's OAuth access token for a provider on the worker that
// runs the tool (package credentials: an OAuth client over an encrypted token store). The
// executor asks it for every Credential a tool declares before the tool starts.
type CredentialSource interface {
	// AccessToken returns a valid access token for req (refreshed when it had expired), or a
	// *ConsentRequiredError when the principal must consent first (no token, a revoked one, or
	// one without the scopes asked). Any other error is reported by provider only: its text may
	// not reach a result.
	AccessToken(ctx context.Context, req CredentialRequest) (string, error)
}

// CredentialRequest asks for Principal's token at Credential.Provider.
type CredentialRequest struct {
	Principal  Principal
	Credential Credential
	// Waiter identifies what waits for the consent if there is none yet (on the durable path,
	// the call's workflow ID), so the consent endpoint can wake it. Optional.
	Waiter string
}

// ConsentRequiredError says the principal has not consented to the provider (or its consent
// was revoked): URL is where they consent, until Expires. The tool has not run.
type ConsentRequiredError struct {
	Provider string
	Scopes   []string
	URL      string
	Expires  time.Time
}

// Error names the provider and the URL (which holds no secret).
func (e *ConsentRequiredError) Error() string {
	return "credential " + `"` + e.Provider + `"` + " needs the principal's consent: " + e.URL
}
