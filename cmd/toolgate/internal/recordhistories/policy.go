package main

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/fixtures"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// policyQueue is where the policy scenarios' worker (holding fixtures.RecordedPolicy) polls.
const policyQueue = "toolgate-policy"

// policyScenarios are calls decided by fixtures.RecordedPolicy: denied by a group rule and by an argument
// rule (POLICY_DENIED, nothing scheduled), allowed, and a would-be denial in log-only mode (it
// runs; the decision is recorded).
func policyScenarios() []scenario {
	guest := toolcore.Principal{Issuer: "https://idp.example", Subject: "bob", Groups: []string{"guests"}, AuthenticatedBy: toolcore.AuthenticatedByMCP}
	staff := toolcore.Principal{Issuer: "https://idp.example", Subject: "alice", Groups: []string{"staff"}, AuthenticatedBy: toolcore.AuthenticatedByMCP}
	return []scenario{
		{"policy/denied-group.json", decidedBy(false, guest, mustCall("call-policy-echo-guest", toolbox.NameEcho, `{"text":"hi"}`))},
		{"policy/denied-arguments.json", decidedBy(false, staff, mustCall("call-policy-add-big", toolbox.NameAdd, `{"left":5000,"right":1}`))},
		{"policy/allowed.json", decidedBy(false, guest, mustCall("call-policy-add-small", toolbox.NameAdd, `{"left":5,"right":1}`))},
		{"policy/log-only.json", decidedBy(true, guest, mustCall("call-policy-echo-logonly", toolbox.NameEcho, `{"text":"hi"}`))},
	}
}

// decidedBy runs call for p on a worker of its own holding fixtures.RecordedPolicy (log-only or not).
func decidedBy(logOnly bool, p toolcore.Principal, call toolcore.ToolCall) func(context.Context, *recorder) (string, error) {
	return func(ctx context.Context, r *recorder) (string, error) {
		set, err := policy.Parse("recorded.cedar", []byte(fixtures.RecordedPolicy))
		if err != nil {
			return "", err
		}
		reg, err := registry()
		if err != nil {
			return "", err
		}
		queue := policyQueue
		if logOnly {
			queue += "-log-only"
		}
		w, err := worker.New(r.sdk, r.namespace, reg, worker.Options{TaskQueue: queue, Policy: policy.NewSource(set, logOnly)})
		if err != nil {
			return "", fmt.Errorf("build policy worker: %w", err)
		}
		if err := w.Start(); err != nil {
			return "", fmt.Errorf("start policy worker: %w", err)
		}
		defer w.Stop()
		tools := client.New(r.sdk, client.Options{Namespace: r.namespace, TaskQueue: queue})
		id, err := tools.Start(client.WithPrincipal(ctx, p), call)
		if err != nil {
			return "", err
		}
		return id, r.waitClosed(ctx, id)
	}
}
