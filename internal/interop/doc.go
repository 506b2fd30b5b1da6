// Package interop tests toolgate from another language's official Temporal client: it starts the
// embedded server and a toolbox worker, and runs interop/contract.mjs (Node, npm
// @temporalio/client installed by `make setup`), which drives the durable contract with the
// recipe of interop/toolcall.mjs and reports what it saw. The package has tests only.
package interop
