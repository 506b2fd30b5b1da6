package toolcore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/toolcore"
)

// BenchmarkRedact is the cost redaction adds to an attempt: resolving two secrets (building the
// redactor) and redacting a full-size result that holds none of them, and one that holds one.
func BenchmarkRedact(b *testing.B) {
	src := mapSource{"api_key": testKey, "db_password": "correct-horse-battery-staple"}
	clean := strings.Repeat("the quick brown fox jumps over the lazy dog ", toolcore.MaxContentCodePoints/44)
	dirty := clean[:2000] + testKey + clean[2000+len(testKey):]
	b.Run("resolve", func(b *testing.B) {
		for b.Loop() {
			if _, err := toolcore.ResolveSecrets(context.Background(), src, "t", []string{"api_key", "db_password"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	sec, err := toolcore.ResolveSecrets(context.Background(), src, "t", []string{"api_key", "db_password"})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("clean-4096", func(b *testing.B) {
		for b.Loop() {
			_ = sec.Redact(clean)
		}
	})
	b.Run("one-secret-4096", func(b *testing.B) {
		for b.Loop() {
			_ = sec.Redact(dirty)
		}
	})
}
