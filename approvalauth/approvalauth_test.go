package approvalauth_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	commonpb "go.temporal.io/api/common/v1"
	updatepb "go.temporal.io/api/update/v1"
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
// subject and groups the claims carry; other requests and other updates always pass.
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
