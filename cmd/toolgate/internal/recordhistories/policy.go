package main

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/worker"
)

// RecordedPolicy is the policy set the policy/*.json histories were recorded under (its copy in
// workflows/replay_policy_test.go must stay equal): guests may not echo, add only below 1000.
const RecordedPolicy = `permit (principal, action, resource);

@id("guests-no-echo")
@reason("guests may not echo")
forbid (principal in Toolgate::Group::"guests", action, resource == Toolgate::Tool::"echo");

@id("add-small")
@reason("add takes left below 1000")
forbid (principal, action, resource == Toolgate::Tool::"add")
unless { context.arguments has left && context.arguments.left < 1000 };
`

// policyQueue is where the policy scenarios' worker (holding RecordedPolicy) polls.
const policyQueue = "toolgate-policy"

// policyScenarios are calls decided by RecordedPolicy: denied by a group rule and by an argument
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

// decidedBy runs call for p on a worker of its own holding RecordedPolicy (log-only or not).
func decidedBy(logOnly bool, p toolcore.Principal, call toolcore.ToolCall) func(context.Context, *recorder) (string, error) {
	return func(ctx context.Context, r *recorder) (string, error) {
		set, err := policy.Parse("recorded.cedar", []byte(RecordedPolicy))
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
