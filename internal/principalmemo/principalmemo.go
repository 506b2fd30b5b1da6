// Package principalmemo reads a call's principal from its start's memo (the field
// wire.MemoPrincipal): the one decoder the workflow, the client's Status, replay and the CLI
// share, so all read the same principal and refuse the same malformed ones.
package principalmemo

import (
	"encoding/json"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// Read returns the principal of memo: nil without the field; an error for one that does not
// decode or fails toolcore.Principal.Check. A plain JSON payload (any SDK's default converter) is
// decoded directly; any other (an encrypted one) needs dc, the client's data converter (nil:
// plain JSON only). Deterministic, fit for workflow code.
func Read(memo *commonpb.Memo, dc converter.DataConverter) (*toolcore.Principal, error) {
	payload := memo.GetFields()[wire.MemoPrincipal]
	if payload == nil {
		return nil, nil
	}
	var p toolcore.Principal
	if string(payload.GetMetadata()[converter.MetadataEncoding]) == converter.MetadataEncodingJSON {
		if err := json.Unmarshal(payload.GetData(), &p); err != nil {
			return nil, fmt.Errorf("memo %s is not a principal: %v", wire.MemoPrincipal, err)
		}
	} else {
		if dc == nil {
			return nil, fmt.Errorf("memo %s is encoded %q: give the worker the client's data converter (worker.Options.DataConverter) to read it",
				wire.MemoPrincipal, payload.GetMetadata()[converter.MetadataEncoding])
		}
		if err := dc.FromPayload(payload, &p); err != nil {
			return nil, fmt.Errorf("memo %s does not decode: %v", wire.MemoPrincipal, err)
		}
	}
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("memo %s: %v", wire.MemoPrincipal, err)
	}
	return &p, nil
}
