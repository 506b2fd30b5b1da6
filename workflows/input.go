package workflows

import (
	"errors"
	"github.com/toolgate/toolgate/wire"
	"strconv"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
)

// decodeCall snapshots the workflow input. Every failure is a non-retryable ApplicationError of
// type wire.ErrTypeInvalidToolCall carrying the contract error's message, so a malformed input fails
// the workflow once instead of wedging its task.
func decodeCall(input Input) (toolcore.ToolCall, error) {
	payload := input.Payload()
	if payload == nil {
		return toolcore.ToolCall{}, invalidCall("missing input: the workflow takes one payload, the tool-call JSON")
	}
	switch encoding := string(payload.GetMetadata()[converter.MetadataEncoding]); encoding {
	case converter.MetadataEncodingJSON, converter.MetadataEncodingBinary:
		// JSON as sent by any SDK or the CLI, or the raw bytes of it from a Go []byte argument.
	default:
		return toolcore.ToolCall{}, invalidCall("input encoding " + quote(encoding) + " is not json/plain")
	}
	call, err := toolcore.ParseToolCall(payload.GetData())
	if err != nil {
		var ce *toolcore.ContractError
		if errors.As(err, &ce) {
			return toolcore.ToolCall{}, invalidCall(ce.Message)
		}
		return toolcore.ToolCall{}, invalidCall(toolcore.ErrorText(err))
	}
	return call, nil
}

// checkWorkflowID refuses a workflow ID that is not printable ASCII (0x20-0x7E). Temporal SDKs send
// the workflow ID in a gRPC header, and gRPC refuses such header values: a worker without the
// worker package's header escaping could never complete the workflow, and another client's
// resubmission under the escaped ID would not find this run. Failing fast tells a foreign client
// the rule. (Replay-safe: before this check no Go worker could complete a workflow task of such an
// ID, so no history with one records anything but this failure.)
func checkWorkflowID(id string) error {
	for i := 0; i < len(id); i++ {
		if id[i] < ' ' || id[i] > '~' {
			return invalidCall("workflow ID " + quote(id) + " is not printable ASCII: derive it from the call ID as " +
				`"toolcall-" + the call ID with every UTF-8 byte outside '!'..'~', and '%', written as %XX ` +
				`(upper-case hex), e.g. toolcall-ts-%C3%A9-1 for call ID "ts-é-1"; see docs/contract.md`)
		}
	}
	return nil
}

func invalidCall(message string) error {
	return temporal.NewNonRetryableApplicationError(message, wire.ErrTypeInvalidToolCall, nil)
}

// quote bounds and quotes an untrusted string for an error message.
func quote(s string) string {
	const maxBytes = 64
	if len(s) > maxBytes {
		s = s[:maxBytes] + "…"
	}
	return strconv.Quote(s)
}
