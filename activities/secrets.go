package activities

import (
	"context"
	"encoding/json"
	"errors"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// attemptSecrets resolves what tool declares for one attempt, before it runs: its secrets from
// a.Secrets and, with principal, its credentials' access tokens from a.Credentials (waiter is
// what a consent wakes: the call's workflow ID). A nil *Secrets (nothing declared) redacts
// nothing. The error is a *toolcore.SecretError (a secret or credential not available), a
// *toolcore.ConsentRequiredError, or a credential source's error (wrapped with the provider).
func (a *Activities) attemptSecrets(ctx context.Context, tool toolcore.Tool, principal *toolcore.Principal, waiter string, credentials bool) (*toolcore.Secrets, error) {
	opts := tool.Options()
	if len(opts.Secrets) == 0 && (!credentials || len(opts.Credentials) == 0) {
		return nil, nil
	}
	sec, err := toolcore.ResolveSecrets(ctx, a.Secrets, tool.Name(), opts.Secrets)
	if err != nil || !credentials {
		return sec, err
	}
	for _, c := range opts.Credentials {
		name := "oauth:" + c.Provider
		switch {
		case a.Credentials == nil:
			return nil, &toolcore.SecretError{Name: name, Reason: "is not available: the worker has no OAuth providers configured"}
		case principal == nil || principal.IsZero():
			return nil, &toolcore.SecretError{Name: name, Reason: "is a per-user credential, and the call runs for no one (start it with a principal)"}
		}
		token, err := a.Credentials.AccessToken(ctx, toolcore.CredentialRequest{Principal: principal.Clone(), Credential: c, Waiter: waiter})
		var consent *toolcore.ConsentRequiredError
		switch {
		case errors.As(err, &consent):
			return nil, consent
		case err != nil:
			return nil, &toolcore.SecretError{Name: name, Reason: "could not be obtained on the worker", Err: err}
		}
		if err := sec.AddAccessToken(c.Provider, token); err != nil {
			return nil, err
		}
	}
	return sec, nil
}

// secretsUnavailable ends an attempt whose secrets or credentials could not be had, without
// running the tool: a missing consent is the non-retryable wire.ErrTypeConsentRequired the
// workflow waits on (the request as its detail); anything else is the call's final
// TOOL_EXECUTION_FAILED result naming the secret or provider, never a value (the source's own
// error goes to the worker's log only).
func secretsUnavailable(ctx context.Context, call toolcore.ToolCall, err error) (ExecuteToolOutput, error) {
	var consent *toolcore.ConsentRequiredError
	if errors.As(err, &consent) {
		activity.GetLogger(ctx).Info("Tool waits for its principal's consent", "toolCallId", call.ID(), "toolName", call.Name(), "provider", consent.Provider)
		return ExecuteToolOutput{}, temporal.NewNonRetryableApplicationError("the call's principal has not consented to "+quote(consent.Provider)+"; the tool did not run",
			wire.ErrTypeConsentRequired, nil, wire.ConsentRequest{Provider: consent.Provider, Scopes: consent.Scopes, URL: consent.URL, Expires: consent.Expires.UTC()})
	}
	msg := toolcore.ErrorText(err)
	var se *toolcore.SecretError
	if errors.As(err, &se) {
		msg = se.Error()
		if se.Err != nil {
			activity.GetLogger(ctx).Warn("Secret not available; the tool did not run", "toolCallId", call.ID(), "toolName", call.Name(), "secret", se.Name, "error", se.Err.Error())
		}
	}
	res := toolcore.ErrorResult(call, toolcore.CodeToolExecutionFailed, msg+"; the tool did not run")
	return ExecuteToolOutput{Content: res.Content(), IsError: true}, nil
}

// redactedReports wraps an attempt's progress and checkpoint sinks so what the tool reports is
// redacted before it reaches a heartbeat: a checkpoint whose redaction breaks its JSON (a secret
// written as a bare number) is dropped, and the worker's log says so.
func redactedReports(ctx context.Context, sec *toolcore.Secrets, report func(toolcore.Progress), checkpoint func(json.RawMessage)) (func(toolcore.Progress), func(json.RawMessage)) {
	logger := activity.GetLogger(ctx)
	return func(p toolcore.Progress) { report(sec.RedactProgress(p)) },
		func(raw json.RawMessage) {
			red, ok := sec.RedactCheckpoint(raw)
			if !ok {
				logger.Warn("Checkpoint dropped: it held a secret's value whose redaction leaves no valid JSON")
				return
			}
			checkpoint(red)
		}
}
