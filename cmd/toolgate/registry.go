package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/toolgate/toolgate/toolbox"
	"github.com/toolgate/toolgate/toolcore"
)

// toolboxOptions configure the ready tools a worker serves.
type toolboxOptions struct {
	root        string
	allowHosts  []string
	httpBearer  []string // ORIGIN=SECRET
	httpHeaders []string // ORIGIN=HEADER:SECRET
}

func addToolboxFlags(cmd *cobra.Command, o *toolboxOptions) {
	fs := cmd.Flags()
	fs.StringVar(&o.root, "root", "", "directory read_file, list_dir and write_file serve (default none: the three tools are left out)")
	fs.StringSliceVar(&o.allowHosts, "allow-host", nil, "host http_get may fetch from (repeat or comma-separate; none by default)")
	fs.StringArrayVar(&o.httpBearer, "http-bearer", nil, "ORIGIN=SECRET: http_get sends Authorization: Bearer <the secret's value> to ORIGIN (https://host[:port]) only; the value comes from --secrets-dir or --secrets-env-prefix (repeat)")
	fs.StringArrayVar(&o.httpHeaders, "http-header", nil, "ORIGIN=HEADER:SECRET: http_get sends HEADER: <the secret's value> to ORIGIN only (repeat)")
	bindEnv(fs, "root", "TOOLGATE_ROOT")
	bindEnv(fs, "allow-host", "TOOLGATE_ALLOW_HOSTS")
}

// registry builds the toolbox registry the options describe; the tools log what they keep from
// the model (such as the address a refused host resolved to) to logger, which may be nil.
func (o toolboxOptions) registry(logger *zap.Logger) (*toolcore.Registry, error) {
	creds, err := o.httpCredentials()
	if err != nil {
		return nil, badInput(err)
	}
	reg, err := toolbox.New(toolbox.Config{Root: o.root, AllowHosts: o.allowHosts, HTTPCredentials: creds, Logger: logger})
	if err != nil {
		return nil, badInput(fmt.Errorf("build toolbox: %w", err))
	}
	return reg, nil
}

// httpCredentials parses --http-bearer and --http-header (names only: the values are secrets).
func (o toolboxOptions) httpCredentials() ([]toolbox.HTTPCredential, error) {
	var creds []toolbox.HTTPCredential
	for _, v := range o.httpBearer {
		origin, secret, ok := strings.Cut(v, "=")
		if !ok || origin == "" || secret == "" {
			return nil, fmt.Errorf("--http-bearer %q: want ORIGIN=SECRET (a secret's name, not its value)", v)
		}
		creds = append(creds, toolbox.HTTPCredential{Origin: origin, Header: "Authorization", Secret: secret, Prefix: "Bearer "})
	}
	for _, v := range o.httpHeaders {
		origin, rest, ok := strings.Cut(v, "=")
		header, secret, ok2 := strings.Cut(rest, ":")
		if !ok || !ok2 || origin == "" || header == "" || secret == "" {
			return nil, fmt.Errorf("--http-header %q: want ORIGIN=HEADER:SECRET (a secret's name, not its value)", v)
		}
		creds = append(creds, toolbox.HTTPCredential{Origin: origin, Header: header, Secret: secret})
	}
	return creds, nil
}
