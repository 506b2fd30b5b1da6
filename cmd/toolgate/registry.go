package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
)

// toolboxOptions configure the ready tools a worker serves.
type toolboxOptions struct {
	root       string
	allowHosts []string
}

func addToolboxFlags(cmd *cobra.Command, o *toolboxOptions) {
	fs := cmd.Flags()
	fs.StringVar(&o.root, "root", "", "directory read_file, list_dir and write_file serve (default none: the three tools are left out)")
	fs.StringSliceVar(&o.allowHosts, "allow-host", nil, "host http_get may fetch from (repeat or comma-separate; none by default)")
	bindEnv(fs, "root", "TOOLGATE_ROOT")
	bindEnv(fs, "allow-host", "TOOLGATE_ALLOW_HOSTS")
}

// registry builds the toolbox registry the options describe; the tools log what they keep from
// the model (such as the address a refused host resolved to) to logger, which may be nil.
func (o toolboxOptions) registry(logger *zap.Logger) (*toolcore.Registry, error) {
	reg, err := toolbox.New(toolbox.Config{Root: o.root, AllowHosts: o.allowHosts, Logger: logger})
	if err != nil {
		return nil, badInput(fmt.Errorf("build toolbox: %w", err))
	}
	return reg, nil
}
