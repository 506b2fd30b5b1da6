package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/secrets"
	"github.com/toolgate/toolgate/toolcore"
)

// secretsFlags are --secrets-dir and --secrets-env-prefix of worker and dev: the secret source of
// the worker's tools (worker.Options.Secrets).
type secretsFlags struct {
	dir       string
	envPrefix string
}

func addSecretsFlags(cmd *cobra.Command, o *secretsFlags) {
	fs := cmd.Flags()
	fs.StringVar(&o.dir, "secrets-dir", "", "read the secrets tools declare from files DIR/NAME, re-read when they change (/run/secrets)")
	fs.StringVar(&o.envPrefix, "secrets-env-prefix", "", "read the secrets tools declare from variables PREFIX+NAME (upper case), after --secrets-dir")
	bindEnv(fs, "secrets-dir", "TOOLGATE_SECRETS_DIR")
	bindEnv(fs, "secrets-env-prefix", "TOOLGATE_SECRETS_ENV_PREFIX")
}

// source is the worker's secret source: the directory, then the environment (read through
// lookup); nil with neither. A directory that is missing, or a bad prefix, fails here.
func (o secretsFlags) source(lookup func(string) (string, bool)) (toolcore.SecretSource, error) {
	var sources []toolcore.SecretSource
	if o.dir != "" {
		info, err := os.Stat(o.dir)
		if err != nil {
			return nil, badInput(fmt.Errorf("--secrets-dir: %w", err))
		}
		if !info.IsDir() {
			return nil, badInput(fmt.Errorf("--secrets-dir %s is not a directory", o.dir))
		}
		sources = append(sources, &secrets.Dir{Path: o.dir})
	}
	if o.envPrefix != "" {
		env := secrets.Env{Prefix: o.envPrefix, LookupEnv: lookup}
		if err := env.Check(); err != nil {
			return nil, badInput(fmt.Errorf("--secrets-env-prefix: %w", err))
		}
		sources = append(sources, env)
	}
	switch len(sources) {
	case 0:
		return nil, nil
	case 1:
		return sources[0], nil
	}
	return secrets.Chain(sources...), nil
}

// mountSecretFlags are --mcp-header, --mcp-bearer and --mcp-query of worker: a mount's
// credentials by secret name, never by value.
type mountSecretFlags struct {
	headers []string // PREFIX=Header-Name=SECRET_NAME
	bearers []string // PREFIX=SECRET_NAME
	query   []string // PREFIX=param=SECRET_NAME
}

func addMountSecretFlags(cmd *cobra.Command, o *mountSecretFlags) {
	fs := cmd.Flags()
	fs.StringArrayVar(&o.headers, "mcp-header", nil, "PREFIX=Header-Name=SECRET_NAME: send this header to the http(s) mount PREFIX, its value the secret's (repeat)")
	fs.StringArrayVar(&o.bearers, "mcp-bearer", nil, "PREFIX=SECRET_NAME: send Authorization: Bearer <the secret's value> to the http(s) mount PREFIX")
	fs.StringArrayVar(&o.query, "mcp-query", nil, "PREFIX=param=SECRET_NAME: add this query parameter to the http(s) mount PREFIX's URL, its value the secret's (repeat)")
}

// mountCredentialHelp says how to pass a mount's credential instead of writing it in argv.
const mountCredentialHelp = "every local user can read a process's arguments in /proc/PID/cmdline: put the credential in a secret (a file of --secrets-dir, or a variable of --secrets-env-prefix) and name it with --mcp-bearer PREFIX=SECRET_NAME, --mcp-header PREFIX=Header-Name=SECRET_NAME or --mcp-query PREFIX=param=SECRET_NAME"

// checkMountURLs refuses an --mcp http(s) URL that carries a credential (userinfo, a query
// parameter named like one), naming where, never echoing the URL.
func checkMountURLs(mounts []string) error {
	for i, spec := range mounts {
		prefix, target, _ := strings.Cut(spec, "=")
		if where := mcp.CredentialInURL(target); where != "" {
			name := fmt.Sprintf("mount %q", prefix)
			if !mcpPrefix(prefix) {
				name = fmt.Sprintf("mount number %d", i+1) // the text before '=' may be anything
			}
			return badInput(fmt.Errorf("--mcp: the URL of %s carries a credential in its %s; %s", name, where, mountCredentialHelp))
		}
	}
	return nil
}

// mcpPrefix reports whether p is a valid mount prefix (safe to echo).
func mcpPrefix(p string) bool {
	_, _, err := mcp.SplitMount(p + "=x")
	return err == nil
}

// options returns each http(s) mount's headers and query parameters, by prefix; src resolves
// them. A flag naming no http(s) mount, or given without a secret source, is an error.
func (o mountSecretFlags) options(mounts []string, src toolcore.SecretSource) (map[string]mcp.MountOptions, error) {
	httpMounts := map[string]bool{}
	for _, m := range mounts {
		if p, target, err := mcp.SplitMount(m); err == nil {
			httpMounts[p] = strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://")
		}
	}
	out := map[string]mcp.MountOptions{}
	add := func(flag, spec, prefix string, f func(*mcp.MountOptions)) error {
		isHTTP, ok := httpMounts[prefix]
		switch {
		case !ok:
			return badInput(fmt.Errorf("%s %q: no --mcp mount has prefix %q", flag, spec, prefix))
		case !isHTTP:
			return badInput(fmt.Errorf("%s %q: mount %q is a command, not an http(s) URL (a command's credentials: --mcp-env)", flag, spec, prefix))
		case src == nil:
			return badInput(fmt.Errorf("%s %q: the secret needs a source: --secrets-dir or --secrets-env-prefix", flag, spec))
		}
		mo := out[prefix]
		f(&mo)
		mo.Secrets = src
		out[prefix] = mo
		return nil
	}
	for _, spec := range o.headers {
		prefix, rest, _ := strings.Cut(spec, "=")
		header, secret, ok := strings.Cut(rest, "=")
		if !ok || header == "" || secret == "" {
			return nil, badInput(fmt.Errorf("--mcp-header %q: want PREFIX=Header-Name=SECRET_NAME (a secret's name, never its value)", spec))
		}
		if err := add("--mcp-header", spec, prefix, func(mo *mcp.MountOptions) {
			mo.Headers = append(mo.Headers, mcp.SecretHeader{Name: header, Secret: secret})
		}); err != nil {
			return nil, err
		}
	}
	for _, spec := range o.bearers {
		prefix, secret, ok := strings.Cut(spec, "=")
		if !ok || secret == "" || strings.Contains(secret, "=") {
			return nil, badInput(fmt.Errorf("--mcp-bearer %q: want PREFIX=SECRET_NAME (a secret's name, never its value)", spec))
		}
		if err := add("--mcp-bearer", spec, prefix, func(mo *mcp.MountOptions) {
			mo.Headers = append(mo.Headers, mcp.SecretHeader{Name: "Authorization", Secret: secret, Scheme: "Bearer"})
		}); err != nil {
			return nil, err
		}
	}
	for _, spec := range o.query {
		prefix, rest, _ := strings.Cut(spec, "=")
		param, secret, ok := strings.Cut(rest, "=")
		if !ok || param == "" || secret == "" {
			return nil, badInput(fmt.Errorf("--mcp-query %q: want PREFIX=param=SECRET_NAME (a secret's name, never its value)", spec))
		}
		if err := add("--mcp-query", spec, prefix, func(mo *mcp.MountOptions) {
			mo.Query = append(mo.Query, mcp.SecretQuery{Param: param, Secret: secret})
		}); err != nil {
			return nil, err
		}
	}
	return out, nil
}
