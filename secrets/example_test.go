package secrets_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolgate/toolgate/secrets"
)

// A worker's source: files of a directory first (rotated files are re-read), then variables
// TOOLGATE_SECRET_<NAME> of its environment. It becomes worker.Options.Secrets.
func ExampleChain() {
	dir, _ := os.MkdirTemp("", "secrets")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "weather_api_key"), []byte("wk-0123456789\n"), 0o600)

	src := secrets.Chain(
		&secrets.Dir{Path: dir},
		secrets.Env{Prefix: "TOOLGATE_SECRET_"},
	)
	v, err := src.Secret(context.Background(), "weather_api_key")
	fmt.Println(len(v), err)
	// Output: 13 <nil>
}
