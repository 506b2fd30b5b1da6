package toolcore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/toolcore"
)

// BenchmarkLog is the work toolcore.Log does per message before the executor's OnLog: bounding
// the message, serializing and bounding the data, redacting both.
func BenchmarkLog(b *testing.B) {
	sec, err := toolcore.ResolveSecrets(context.Background(), mapSource{"api_key": testKey}, "t", []string{"api_key"})
	if err != nil {
		b.Fatal(err)
	}
	data := map[string]any{"table": "orders", "rows": 1234, "skipped": []int{3, 17, 99}}
	long := strings.Repeat("x", 4*toolcore.MaxLogMessageBytes)
	tests := []struct {
		name    string
		sec     *toolcore.Secrets
		message string
		data    any
	}{
		{name: "message", message: "copying orders"},
		{name: "message+data", message: "rows skipped", data: data},
		{name: "message+data+secret", sec: sec, message: "rows skipped", data: data},
		{name: "long-message+secret", sec: sec, message: long},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				_ = toolcore.BoundLogMessage(tt.sec, toolcore.LogInfo, tt.message, tt.data)
			}
		})
	}
}
