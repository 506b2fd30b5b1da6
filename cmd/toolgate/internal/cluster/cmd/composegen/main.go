// Command composegen writes docker-compose.yml and the Temporal dynamic config it mounts from
// cluster.ComposeFiles, so the compose file's server runs the configuration cmd/toolgate/internal/cluster's
// tests run. `go generate ./cmd/toolgate/internal/cluster` runs it.
//
//	composegen -root <module root>
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolgate/toolgate/cmd/toolgate/internal/cluster"
)

func main() {
	root := flag.String("root", ".", "the module root the files are written under")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "composegen:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	files, err := cluster.ComposeFiles()
	if err != nil {
		return err
	}
	for path, data := range files {
		full := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
