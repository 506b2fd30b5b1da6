// Package credentials keeps each principal's OAuth tokens for the tools that act on their behalf
// (toolcore.Options.Credentials): an encrypted token store shared by the workers, the OAuth 2.1
// client (authorization code with PKCE, refresh) that implements toolcore.CredentialSource, and
// the consent endpoint the provider redirects to. Tokens never enter workflow history.
// docs/secrets.md says how to run it.
package credentials
