package main

import (
	"context"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
	"github.com/toolgate/toolgate/worker"
)

// consentQueue is where the consent scenarios' worker (holding a fixtures.ConsentSource) polls.
const consentQueue = "toolgate-consent"

// consentScenarios are calls of fixtures.Consent that wait for their principal's consent: given
// (the tool then runs once, its result redacted) and refused (it never runs).
func consentScenarios() []scenario {
	return []scenario{
		{"fixtures/consent-given.json", consentFor("call-consent-given", "")},
		{"fixtures/consent-refused.json", consentFor("call-consent-refused", "access_denied")},
	}
}

// consentFor runs a fixtures.Consent call for alice on a worker of its own, waits until it awaits
// consent, then grants it and signals (or signals the refusal).
func consentFor(callID, refused string) func(context.Context, *recorder) (string, error) {
	return func(ctx context.Context, r *recorder) (string, error) {
		reg, err := registry()
		if err != nil {
			return "", err
		}
		src := &fixtures.ConsentSource{}
		w, err := worker.New(r.sdk, r.namespace, reg, worker.Options{TaskQueue: consentQueue, Credentials: src})
		if err != nil {
			return "", fmt.Errorf("build consent worker: %w", err)
		}
		if err := w.Start(); err != nil {
			return "", fmt.Errorf("start consent worker: %w", err)
		}
		defer w.Stop()
		tools := client.New(r.sdk, client.Options{Namespace: r.namespace, TaskQueue: consentQueue})
		alice := toolcore.Principal{Issuer: "https://idp.example", Subject: "alice", AuthenticatedBy: toolcore.AuthenticatedByMCP}
		id, err := tools.Start(client.WithPrincipal(ctx, alice), mustCall(callID, fixtures.Consent, `{}`))
		if err != nil {
			return "", err
		}
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			st, err := tools.ConsentByWorkflowID(ctx, id)
			if err == nil && st.Waiting {
				break
			}
			select {
			case <-ctx.Done():
				return "", fmt.Errorf("wait for %s to await consent: %w (last: %v)", id, ctx.Err(), err)
			case <-tick.C:
			}
		}
		if refused == "" {
			src.Grant(alice.Key())
		}
		if err := r.sdk.SignalWorkflow(ctx, id, "", wire.SignalConsent, wire.ConsentSignal{Provider: fixtures.ConsentProvider, Refused: refused}); err != nil {
			return "", err
		}
		return id, r.waitClosed(ctx, id)
	}
}
