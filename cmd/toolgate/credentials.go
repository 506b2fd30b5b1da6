package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/codec"
	"github.com/toolgate/toolgate/credentials"
	"github.com/toolgate/toolgate/internal/safetext"
)

func newCredentialsCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "credentials",
		Short: "List, revoke or re-encrypt the per-user OAuth tokens the workers keep",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_ = cmd.Help()
			return badInput(errors.New("missing subcommand"))
		},
	}
	cmd.AddCommand(newCredentialsListCommand(a), newCredentialsRevokeCommand(a), newCredentialsRekeyCommand(a))
	return cmd
}

type credentialsListOptions struct {
	store credentialStoreFlags
	json  bool
}

func newCredentialsListCommand(a *app) *cobra.Command {
	var o credentialsListOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the stored per-user OAuth tokens: principal, provider, scopes, expiry",
		Long: `List every token of the credentials store (the workers' --credentials-dir or
--credentials-postgres-file), sorted by principal and provider, one tab-separated line each:

  principal  provider  scopes (comma-separated, "-": none)  expiry (RFC 3339, "-": none)
  refreshable|not-refreshable  key <ID>|plaintext

or a JSON array with --json (principal, provider, scopes, expiry, obtained, refreshable, keyId,
encrypted). No token is read: the listing needs no key. "plaintext" marks a token a development
store (toolgate dev --credentials-insecure-plaintext) wrote unencrypted; "key ID" names the codec
key that seals it (toolgate credentials rekey rewrites those sealed with an old key). Principals and providers are escaped for the terminal.

Exit codes: 0 listed (also when there is none), 2 bad flags, 5 failure.`,
		Example: `  toolgate credentials list --credentials-dir ~/.local/share/toolgate/credentials
  toolgate credentials list --credentials-postgres-file /run/secrets/credentials-dsn --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCredentialsList(cmd.Context(), a, o)
		},
	}
	addCredentialStoreFlags(cmd, a, &o.store, credentialStoreAdmin)
	o.store.DefaultDir = credentialsDefaultDir(a.lookupEnv)
	cmd.Flags().BoolVar(&o.json, "json", false, "print a JSON array")
	return cmd
}

// credentialsDefaultDir is toolgate dev's default store: the credentials directory in its
// default data directory ($TOOLGATE_DATA_DIR or defaultDataDir).
func credentialsDefaultDir(lookupEnv func(string) (string, bool)) string {
	if dir, ok := lookupEnv("TOOLGATE_DATA_DIR"); ok && dir != "" {
		return devCredentialsDir(dir)
	}
	return devCredentialsDir(defaultDataDir(lookupEnv))
}

// devCredentialsDir is the credentials directory inside a dev data directory.
func devCredentialsDir(dataDir string) string {
	return filepath.Join(dataDir, "credentials")
}

// credentialJSON is one entry of credentials list --json.
type credentialJSON struct {
	Principal   string    `json:"principal"`
	Provider    string    `json:"provider"`
	Scopes      []string  `json:"scopes"`
	Expiry      time.Time `json:"expiry,omitzero"`
	Obtained    time.Time `json:"obtained,omitzero"`
	Refreshable bool      `json:"refreshable"`
	KeyID       string    `json:"keyId,omitempty"`
	// Encrypted is false for a token a development store wrote in plaintext.
	Encrypted bool `json:"encrypted"`
}

func runCredentialsList(ctx context.Context, a *app, o credentialsListOptions) error {
	store, closer, err := openCredentialStore(ctx, &o.store, nil)
	if err != nil {
		return err
	}
	defer closer.Close()
	entries, err := store.List(ctx)
	if err != nil {
		return fmt.Errorf("list credentials: %w", err)
	}
	out := make([]credentialJSON, len(entries))
	plaintext := 0
	for i, e := range entries {
		scopes := e.Scopes
		if scopes == nil {
			scopes = []string{}
		}
		out[i] = credentialJSON{Principal: e.Principal, Provider: e.Provider, Scopes: scopes, Expiry: e.Expiry, Obtained: e.Obtained,
			Refreshable: e.Refreshable, KeyID: e.KeyID, Encrypted: e.KeyID != ""}
		if e.KeyID == "" {
			plaintext++
		}
	}
	if plaintext > 0 {
		a.logger.Warn(fmt.Sprintf("%d of %d tokens are stored in plaintext (a development store): revoke them before using this store with --codec-key", plaintext, len(entries)))
	}
	if o.json {
		return writeJSON(a.out, out)
	}
	return writeCredentials(a.out, out)
}

// writeCredentials writes one tab-separated line per token, every untrusted field escaped.
func writeCredentials(w io.Writer, out []credentialJSON) error {
	for _, c := range out {
		scopes := strings.Join(c.Scopes, ",")
		if scopes == "" {
			scopes = "-"
		}
		expiry := "-"
		if !c.Expiry.IsZero() {
			expiry = c.Expiry.UTC().Format(time.RFC3339)
		}
		refresh := "not-refreshable"
		if c.Refreshable {
			refresh = "refreshable"
		}
		key := "plaintext"
		if c.Encrypted {
			key = "key " + c.KeyID
		}
		// Each field escaped on its own: the tabs between them stay.
		fields := []string{c.Principal, c.Provider, scopes, expiry, refresh, key}
		escaped := 0
		for i, f := range fields {
			var n int
			fields[i], n = safetext.Escape(f)
			escaped += n
		}
		line := strings.Join(fields, "\t")
		if escaped > 0 {
			line += "\t" + safetext.Note(escaped)
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

type credentialsRevokeOptions struct {
	store     credentialStoreFlags
	principal string
	provider  string
}

func newCredentialsRevokeCommand(a *app) *cobra.Command {
	var o credentialsRevokeOptions
	cmd := &cobra.Command{
		Use:   "revoke --principal KEY --provider NAME",
		Short: "Delete a principal's stored token at a provider: their next call waits for consent again",
		Long: `Delete the token the credentials store keeps for --principal (the principal's key,
"<issuer> <subject>", as credentials list prints it) at --provider. The next call of that
principal that needs the provider waits for their consent again (awaiting consent); a refresh
under way finishes first and is deleted after. The token is deleted from toolgate's store only:
to make the provider forget the grant too, revoke it there (the user's connected-apps page).

Exit codes: 0 revoked, 1 no such token, 2 bad flags, 5 failure.`,
		Example: `  toolgate credentials revoke --principal 'https://idp.example.com alice' --provider github --credentials-dir ./creds
  TOOLGATE_CREDENTIALS_POSTGRES="$(cat /run/secrets/credentials-dsn)" toolgate credentials revoke --principal 'https://idp.example.com alice' --provider github`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCredentialsRevoke(cmd.Context(), a, o)
		},
	}
	addCredentialStoreFlags(cmd, a, &o.store, credentialStoreAdmin)
	o.store.DefaultDir = credentialsDefaultDir(a.lookupEnv)
	cmd.Flags().StringVar(&o.principal, "principal", "", "the principal's key (\"<issuer> <subject>\", as credentials list prints it)")
	cmd.Flags().StringVar(&o.provider, "provider", "", "the provider's name")
	_ = cmd.MarkFlagRequired("principal")
	_ = cmd.MarkFlagRequired("provider")
	return cmd
}

func runCredentialsRevoke(ctx context.Context, a *app, o credentialsRevokeOptions) error {
	if o.principal == "" || o.provider == "" {
		return badInput(errors.New("--principal and --provider must not be empty"))
	}
	store, closer, err := openCredentialStore(ctx, &o.store, nil)
	if err != nil {
		return err
	}
	defer closer.Close()
	found, err := store.Delete(ctx, o.principal, o.provider)
	if err != nil {
		return fmt.Errorf("revoke: %w", err)
	}
	who := fmt.Sprintf("%s at %s", safetext.String(o.principal), safetext.String(o.provider))
	if !found {
		return &exitError{code: ExitErrorResult, err: fmt.Errorf("no token of %s", who)}
	}
	_, err = fmt.Fprintf(a.out, "revoked %s\n", who)
	return err
}

type credentialsRekeyOptions struct {
	store    credentialStoreFlags
	codecKey string
}

func newCredentialsRekeyCommand(a *app) *cobra.Command {
	var o credentialsRekeyOptions
	cmd := &cobra.Command{
		Use:   "rekey --codec-key FILE",
		Short: "Re-encrypt every stored token with the key file's current key (the end of a key rotation)",
		Long: `Rewrite every token of the credentials store that a key other than --codec-key's current
one seals, so it is sealed with the current key: run it in phase 2 of a key rotation (the new key
encrypts), and remove the old key from the file only once credentials list names it no more.
Tokens are rewritten one at a time under the lock a refresh takes, while workers run. A token
sealed with a key the file lacks, or stored in plaintext by a development store, cannot be
rewritten: it is named, the others are rewritten, and the command exits 5 (revoke those).

Prints "rekeyed N tokens with key ID".

Exit codes: 0 every token is sealed with the current key, 2 bad flags, 5 failure.`,
		Example: `  toolgate credentials rekey --codec-key keys.txt --credentials-dir /var/lib/toolgate/credentials`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCredentialsRekey(cmd.Context(), a, o)
		},
	}
	addCredentialStoreFlags(cmd, a, &o.store, credentialStoreAdmin)
	o.store.DefaultDir = credentialsDefaultDir(a.lookupEnv)
	addCodecKeyFlag(cmd, &o.codecKey)
	return cmd
}

func runCredentialsRekey(ctx context.Context, a *app, o credentialsRekeyOptions) error {
	if o.codecKey == "" {
		return badInput(errors.New("--codec-key is required: the keys to re-encrypt with"))
	}
	ring, err := loadKeyring(o.codecKey)
	if err != nil {
		return err
	}
	store, closer, err := openCredentialStore(ctx, &o.store, ring)
	if err != nil {
		return err
	}
	defer closer.Close()
	n, err := credentials.Reseal(ctx, store, ring.CurrentKeyID())
	if _, perr := fmt.Fprintf(a.out, "rekeyed %d tokens with key %s\n", n, ring.CurrentKeyID()); perr != nil && err == nil {
		err = perr
	}
	if err != nil {
		return fmt.Errorf("rekey: %s", safetext.String(err.Error()))
	}
	return nil
}

// credentialKeys is the keyring a store opens tokens with: the command's --codec-key watcher, or
// nil.
func credentialKeys(w *codec.KeyringWatcher) codec.KeySource {
	if w == nil {
		return nil
	}
	return w
}
