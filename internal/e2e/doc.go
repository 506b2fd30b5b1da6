// Package e2e holds the end-to-end tests of the durable path: a real toolgate worker and client
// against the embedded Temporal server (cmd/toolgate/internal/devserver, one server per test binary through
// devtest). It is the one test package besides cmd/toolgate/internal/devserver that links the server, which
// takes minutes to link (make test runs it without the race detector, see scripts/packages): add
// server tests here rather than in a new package.
//
// # What is covered
//
// Idempotent resubmission (the tool runs once), conflicting resubmission, cancellation through
// the client and through Execute's context, a worker lost mid-call for an Unsafe tool (outcome
// unknown, ran once) and an Idempotent tool (completed on a second worker), search attributes,
// progress of a running tool, and the error mapping (NonRecoverableToolError, INVALID_TOOL_CALL,
// not found, closed).
package e2e
