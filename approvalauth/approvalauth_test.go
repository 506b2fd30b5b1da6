package approvalauth_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	commonpb "go.temporal.io/api/common/v1"
	schedulepb "go.temporal.io/api/schedule/v1"
	updatepb "go.temporal.io/api/update/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/toolgate/toolgate/approvalauth"
	"github.com/toolgate/toolgate/wire"
)

func update(name, encoding, data string) *workflowservice.UpdateWorkflowExecutionRequest {
	return &workflowservice.UpdateWorkflowExecutionRequest{Request: &updatepb.Request{Input: &updatepb.Input{
		Name: name,
		Args: &commonpb.Payloads{Payloads: []*commonpb.Payload{{
			Metadata: map[string][]byte{"encoding": []byte(encoding)},
			Data:     []byte(data),
		}}},
	}}}
}

// TestCheck: approve and reject updates pass only when the decision names the authenticated
// subject, the issuer the claims vouch for and groups the claims carry; other requests and other
// updates always pass.
func TestCheck(t *testing.T) {
	alice := &approvalauth.Identity{Subject: "alice", Groups: []string{"payments"}}
	const hash = `"callHash":"sha256:00"`
	tests := []struct {
		name    string
		request any
		id      *approvalauth.Identity
		refused string // "" passes
	}{
		{"approve by the subject", update(wire.UpdateApprove, "json/plain", `{`+hash+`,"reviewer":"alice"}`), alice, ""},
		{"reject by the subject", update(wire.UpdateReject, "json/plain", `{`+hash+`,"reviewer":"alice","reason":"no"}`), alice, ""},
		{"a carried group", update(wire.UpdateApprove, "json/plain", `{"reviewer":"alice","groups":["payments"]}`), alice, ""},
		{"another reviewer", update(wire.UpdateApprove, "json/plain", `{"reviewer":"mallory"}`), alice, `names reviewer "mallory", the caller is authenticated as "alice"`},
		{"another reviewer rejects", update(wire.UpdateReject, "json/plain", `{"reviewer":"bob"}`), alice, `names reviewer "bob"`},
		{"case differs", update(wire.UpdateApprove, "json/plain", `{"reviewer":"Alice"}`), alice, `names reviewer "Alice"`},
		{"padded name", update(wire.UpdateApprove, "json/plain", `{"reviewer":" alice"}`), alice, `names reviewer " alice"`},
		{"another issuer", update(wire.UpdateApprove, "json/plain", `{"reviewer":"alice","issuer":"https://evil.example"}`), alice, `names issuer "https://evil.example", the claims of "alice" vouch for no issuer`},
		{"the vouched issuer", update(wire.UpdateApprove, "json/plain", `{"reviewer":"alice","issuer":"https://idp.example"}`), &approvalauth.Identity{Issuer: "https://idp.example", Subject: "alice"}, ""},
		{"no issuer where one is vouched", update(wire.UpdateApprove, "json/plain", `{"reviewer":"alice"}`), &approvalauth.Identity{Issuer: "https://idp.example", Subject: "alice"}, `names issuer "", the claims of "alice" vouch for issuer "https://idp.example"`},
		{"a group not carried", update(wire.UpdateApprove, "json/plain", `{"reviewer":"alice","groups":["admins"]}`), alice, `group "admins"`},
		{"groups without vouched groups", update(wire.UpdateApprove, "json/plain", `{"reviewer":"bob","groups":["payments"]}`), &approvalauth.Identity{Subject: "bob"}, `group "payments"`},
		{"unauthenticated", update(wire.UpdateApprove, "json/plain", `{"reviewer":"alice"}`), nil, "not authenticated"},
		{"no subject", update(wire.UpdateApprove, "json/plain", `{"reviewer":""}`), &approvalauth.Identity{}, "not authenticated"},
		{"encrypted", update(wire.UpdateApprove, "binary/encrypted", "\x00\x01"), alice, "cannot be checked"},
		{"not JSON", update(wire.UpdateApprove, "json/plain", `{"reviewer":`), alice, "not an ApprovalDecision"},
		{"two arguments", &workflowservice.UpdateWorkflowExecutionRequest{Request: &updatepb.Request{Input: &updatepb.Input{
			Name: wire.UpdateApprove, Args: &commonpb.Payloads{Payloads: []*commonpb.Payload{{}, {}}},
		}}}, alice, "2 arguments"},
		{"no arguments", &workflowservice.UpdateWorkflowExecutionRequest{Request: &updatepb.Request{Input: &updatepb.Input{Name: wire.UpdateReject}}}, alice, "0 arguments"},
		{"update with start", &workflowservice.ExecuteMultiOperationRequest{Operations: []*workflowservice.ExecuteMultiOperationRequest_Operation{
			{Operation: &workflowservice.ExecuteMultiOperationRequest_Operation_StartWorkflow{StartWorkflow: &workflowservice.StartWorkflowExecutionRequest{}}},
			{Operation: &workflowservice.ExecuteMultiOperationRequest_Operation_UpdateWorkflow{UpdateWorkflow: update(wire.UpdateApprove, "json/plain", `{"reviewer":"mallory"}`)}},
		}}, alice, `names reviewer "mallory"`},
		{"another update", update("set-budget", "binary/encrypted", ""), nil, ""},
		{"another request", &workflowservice.StartWorkflowExecutionRequest{}, nil, ""},
		{"no request", nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := approvalauth.Check(tt.request, tt.id)
			if tt.refused == "" {
				assert.NoError(t, err)
				return
			}
			var refused *approvalauth.RefusedError
			if assert.True(t, errors.As(err, &refused), "refused, got %v", err) {
				assert.Contains(t, refused.Reason, tt.refused)
			}
		})
	}
}

// memo is a start memo holding the principal memo field as data, encoded as encoding.
func memo(encoding, data string) *commonpb.Memo {
	return &commonpb.Memo{Fields: map[string]*commonpb.Payload{wire.MemoPrincipal: {
		Metadata: map[string][]byte{"encoding": []byte(encoding)},
		Data:     []byte(data),
	}}}
}

func start(m *commonpb.Memo) *workflowservice.StartWorkflowExecutionRequest {
	return &workflowservice.StartWorkflowExecutionRequest{WorkflowType: &commonpb.WorkflowType{Name: "ToolCallWorkflow"}, Memo: m}
}

// TestCheckStart: a start whose principal is marked authenticated by the frontend passes only for
// the caller's own identity (subject, issuer, groups, tenant); one marked by toolgate mcp only
// from a caller that delegates; an unmarked one always; an unreadable principal memo never. Every
// start request carrying a memo is checked, whatever the workflow type.
func TestCheckStart(t *testing.T) {
	alice := &approvalauth.Identity{Subject: "alice", Groups: []string{"payments"}, Tenant: "acme"}
	issued := &approvalauth.Identity{Issuer: "https://idp.example", Subject: "alice"}
	mcpServer := &approvalauth.Identity{Subject: "toolgate-mcp", Delegates: true}
	admin := &approvalauth.Identity{Subject: "temporal-system", Admin: true}
	const js = "json/plain"
	tests := []struct {
		name    string
		request any
		id      *approvalauth.Identity
		refused string // "" passes
	}{
		{"frontend, the caller", start(memo(js, `{"subject":"alice","authenticatedBy":"frontend"}`)), alice, ""},
		{"frontend, groups and tenant carried", start(memo(js, `{"subject":"alice","groups":["payments"],"tenant":"acme","name":"Alice","authenticatedBy":"frontend"}`)), alice, ""},
		{"frontend, another subject", start(memo(js, `{"subject":"bob","authenticatedBy":"frontend"}`)), alice, `names subject "bob" and is marked authenticatedBy "frontend", the caller is authenticated as "alice"`},
		{"frontend, an issuer not vouched", start(memo(js, `{"issuer":"https://idp.example","subject":"alice","authenticatedBy":"frontend"}`)), alice, `names issuer "https://idp.example"`},
		{"frontend, the vouched issuer", start(memo(js, `{"issuer":"https://idp.example","subject":"alice","authenticatedBy":"frontend"}`)), issued, ""},
		{"frontend, no issuer where one is vouched", start(memo(js, `{"subject":"alice","authenticatedBy":"frontend"}`)), issued, `vouch for issuer "https://idp.example"`},
		{"frontend, a group not carried", start(memo(js, `{"subject":"alice","groups":["admins"],"authenticatedBy":"frontend"}`)), alice, `group "admins"`},
		{"frontend, another tenant", start(memo(js, `{"subject":"alice","tenant":"globex","authenticatedBy":"frontend"}`)), alice, `tenant "globex"`},
		{"frontend, unauthenticated", start(memo(js, `{"subject":"alice","authenticatedBy":"frontend"}`)), nil, "not authenticated"},
		{"mcp, a caller that does not delegate", start(memo(js, `{"issuer":"https://idp.example","subject":"alice","authenticatedBy":"mcp"}`)), alice, `caller "alice" may not delegate`},
		{"mcp, the delegating caller", start(memo(js, `{"issuer":"https://idp.example","subject":"alice","authenticatedBy":"mcp"}`)), mcpServer, ""},
		{"frontend, the delegating caller for another", start(memo(js, `{"subject":"alice","authenticatedBy":"frontend"}`)), mcpServer, `names subject "alice"`},
		{"an admin, any mark", start(memo(js, `{"subject":"bob","authenticatedBy":"frontend"}`)), admin, ""},
		{"an unknown mark", start(memo(js, `{"subject":"alice","authenticatedBy":"sso"}`)), alice, `authenticatedBy "sso", which is not`},
		{"a mark in another case", start(memo(js, `{"subject":"bob","AuthenticatedBy":"frontend"}`)), alice, `names subject "bob"`},
		{"asserted", start(memo(js, `{"subject":"bob"}`)), nil, ""},
		{"no principal", start(nil), nil, ""},
		{"encrypted", start(memo("binary/encrypted", "\x00")), alice, "cannot be checked"},
		{"not a principal", start(memo(js, `{"subject":`)), alice, "not a principal"},
		{"signal with start", &workflowservice.SignalWithStartWorkflowExecutionRequest{Memo: memo(js, `{"subject":"bob","authenticatedBy":"frontend"}`)}, alice, `names subject "bob"`},
		{"update with start", &workflowservice.ExecuteMultiOperationRequest{Operations: []*workflowservice.ExecuteMultiOperationRequest_Operation{
			{Operation: &workflowservice.ExecuteMultiOperationRequest_Operation_StartWorkflow{StartWorkflow: start(memo(js, `{"subject":"bob","authenticatedBy":"frontend"}`))}},
		}}, alice, `names subject "bob"`},
		{"a schedule", &workflowservice.CreateScheduleRequest{ScheduleId: "nightly", Schedule: &schedulepb.Schedule{Action: &schedulepb.ScheduleAction{
			Action: &schedulepb.ScheduleAction_StartWorkflow{StartWorkflow: &workflowpb.NewWorkflowExecutionInfo{Memo: memo(js, `{"subject":"bob","authenticatedBy":"mcp"}`)}},
		}}}, alice, "may not delegate"},
		{"a schedule update", &workflowservice.UpdateScheduleRequest{ScheduleId: "nightly", Schedule: &schedulepb.Schedule{Action: &schedulepb.ScheduleAction{
			Action: &schedulepb.ScheduleAction_StartWorkflow{StartWorkflow: &workflowpb.NewWorkflowExecutionInfo{Memo: memo(js, `{"subject":"alice","authenticatedBy":"frontend"}`)}},
		}}}, alice, ""},
		{"an update", update(wire.UpdateApprove, js, `{"reviewer":"mallory"}`), alice, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := approvalauth.CheckStart(tt.request, tt.id)
			if tt.refused == "" {
				assert.NoError(t, err)
				return
			}
			var refused *approvalauth.RefusedError
			if assert.True(t, errors.As(err, &refused), "refused, got %v", err) {
				assert.Contains(t, refused.Reason, tt.refused)
				assert.Empty(t, refused.Update)
				assert.Contains(t, refused.Error(), "toolgate start of ")
			}
		})
	}
}
