package mcp

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolgate/toolgate/client"
)

// TestOperatorApprovalMessageNamesTheWorkflowID: the statusMessage of a task waiting for an
// operator names the argument toolgate approve takes, the call's workflow ID (with its scope), not
// the bare call ID.
func TestOperatorApprovalMessageNamesTheWorkflowID(t *testing.T) {
	st := client.Status{WorkflowID: "mcp-alice/toolcall-w1", ToolCallID: "w1", State: client.Running}
	assert.Equal(t, "waiting for an operator's approval (toolgate approve mcp-alice/toolcall-w1)", operatorApprovalMessage(st))
}
