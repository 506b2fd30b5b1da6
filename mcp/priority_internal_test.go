package mcp

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/wire"
)

func TestPriorityMeta(t *testing.T) {
	tests := []struct {
		name    string
		give    sdk.Meta
		want    wire.Priority
		wantErr string
	}{
		{name: "none", give: sdk.Meta{}},
		{name: "all", give: sdk.Meta{PriorityMeta: 1.0, FairnessKeyMeta: "agent-a", FairnessWeightMeta: 2.5},
			want: wire.Priority{Level: 1, FairnessKey: "agent-a", FairnessWeight: 2.5}},
		{name: "level out of range", give: sdk.Meta{PriorityMeta: 6.0}, wantErr: PriorityMeta},
		{name: "fractional level", give: sdk.Meta{PriorityMeta: 1.5}, wantErr: PriorityMeta},
		{name: "level as string", give: sdk.Meta{PriorityMeta: "1"}, wantErr: PriorityMeta},
		{name: "empty key", give: sdk.Meta{FairnessKeyMeta: ""}, wantErr: FairnessKeyMeta},
		{name: "zero weight", give: sdk.Meta{FairnessWeightMeta: 0.0}, wantErr: FairnessWeightMeta},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The server's own principal (no token) gets what _meta asks for.
			ctx, err := Grants{}.startContext(context.Background(), tt.give)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, client.PriorityFrom(ctx))
		})
	}
}
