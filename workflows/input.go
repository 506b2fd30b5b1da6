package workflows

import (
	"errors"
	"strconv"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/toolgate/toolgate/toolcore"
)

// decodeCall snapshots the workflow input. Every failure is a non-retryable ApplicationError of
// type ErrTypeInvalidToolCall carrying the contract error's message, so a malformed input fails
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

func invalidCall(message string) error {
	return temporal.NewNonRetryableApplicationError(message, ErrTypeInvalidToolCall, nil)
}

// quote bounds and quotes an untrusted string for an error message.
func quote(s string) string {
	const maxBytes = 64
	if len(s) > maxBytes {
		s = s[:maxBytes] + "…"
	}
	return strconv.Quote(s)
}
