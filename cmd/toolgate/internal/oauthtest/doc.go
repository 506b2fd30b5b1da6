// Package oauthtest runs real OAuth 2.x authorization servers for the end-to-end tests of
// delegated credentials (issue 33), and drives a user's login and consent at them as a browser
// would. Tests only.
//
// # Two servers, one interface
//
// [Server] is what a test needs of an authorization server: its issuer, a client registered for
// a redirect URI, and [Server.Authorize], which follows an authorization URL as a named user
// (login, consent) until the server redirects to the client's redirect URI. Two servers
// implement it:
//
//   - [StartHydra]: ORY Hydra v2.3.0, built from the Go module proxy by [BuildHydra] in the tools
//     module internal/tools/hydra (a module of its own, outside go.work: Hydra's ~400 packages
//     never enter the main build graph), run as `hydra serve all --dev` on an in-memory SQLite
//     database. The test is Hydra's login and consent app: Authorize accepts the login and
//     consent challenges through the admin API. Building it costs minutes of CPU on a cold
//     cache, so only the long tests (`make test-oauth`, -args -hydra) use it.
//   - [StartProvider]: zitadel/oidc's OpenID provider (pkg/op, a certified implementation) with
//     the in-memory storage and the login form of its example server, in process. Light to
//     compile: the short form that `make test` runs.
//
// Both issue real authorization codes bound to a PKCE challenge (S256), rotate refresh tokens and
// answer the OpenID Connect userinfo endpoint for the token's subject, so a tool that reads its
// principal's subject there proves whose token it was given.
//
// # The scenario
//
// TestDelegatedCredentialsProvider and TestDelegatedCredentialsHydra run issue 33's delegated
// credentials end to end against each server, with real processes: `toolgate dev`, the test
// binary itself as the worker of the whoami tool (it runs in worker mode when $OAUTHTEST_WORKER
// holds its configuration), `toolgate worker --oauth-providers` as the consent endpoint on the
// same credentials store, and the CLI (call --as, status, result, credentials list and revoke).
//
// # Users
//
// A user is a name: Hydra takes it as the subject the login app accepts; the provider knows the
// users it was started with (Config.Users), each logging in with its name and [Password].
package oauthtest
