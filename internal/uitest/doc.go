// Package uitest checks the Temporal Web UI that `toolgate dev` serves, in a real headless
// Chromium: what an operator sees when they open a tool call in the browser. It has only tests.
//
// # What is covered
//
// One completed call (`toolgate call add '{"left":20,"right":22}'`) is looked up three ways: the
// workflow list, which must list its workflow ID, run ID, type and status and link to the run;
// the workflow page by workflow ID (/namespaces/default/workflows/toolcall-<callId>, the URL a
// user types); and the run's event history page (/namespaces/default/workflows/<wid>/<runId>/history).
// Both workflow pages must show the workflow ID, the status Completed, the call as the Input and,
// as the Result, exactly the tool-result message that `toolgate call` printed.
//
// With `toolgate dev --codec-key`, an echo call's payloads are stored encrypted and the workflow
// page must still show its decoded call and result: the browser asks the codec server dev starts
// (cross-origin, with a CORS preflight) to decode them.
//
// The example agent (examples/agent, built as a binary) runs against the same kind of `toolgate
// dev`: its answer quotes its tools' results, each of its tool calls is a child workflow of the
// agent workflow, and the agent's Relationships page lists both children, linked to their runs.
//
// # How it runs
//
// The test builds cmd/toolgate once, starts `toolgate dev --in-memory --port 0 --ui-port 0` as a
// real process, reads the printed frontend and UI addresses, and runs `toolgate call` and
// `toolgate status` against it: the same binary and commands a user runs. The package does not
// import the server, so its own test binary stays small. Chromium is Debian's, found or installed
// by internal/uitest/browser, and driven over the DevTools protocol with chromedp, which can wait for a
// condition in the page instead of a fixed time. -short skips the test.
//
// # Artifacts
//
// Each page's screenshot (ui-workflows.png, ui-workflow.png, ui-workflow-history.png,
// ui-agent-relationships.png, ...) is written, pass or fail, to $TOOLGATE_ARTIFACTS, else to
// .artifacts/ at the module root (git-ignored); the test logs the paths.
package uitest
