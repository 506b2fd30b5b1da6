// Package conformancetools is the fixture tools of the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in interop/conformance) written as toolgate tools:
// what each server scenario calls by name (test_simple_text, test_tool_with_progress, greet,
// slow_compute, test_input_required_result_elicitation, ...), defined with toolcore.Define and
// served by a test worker, so the suite drives `toolgate mcp` against durable calls, never
// against a mounted stand-in. Only mcp's conformance tests use it.
//
// # Fixtures
//
// Registry returns every fixture. Each behaves as the scenario's text asks (the scenario's
// description in the suite: "Implement tool X that returns ..."): the same names, arguments,
// texts, progress reports, questions (keys and params) and failures. A fixture never reads
// anything of its caller but its arguments and the answers to its own questions.
//
// # Task support
//
// TaskSupportForbidden and TaskSupportRequired name the fixtures the tasks extension scenarios
// expect registered with task support forbidden or required: `toolgate mcp
// --task-support-forbidden` and `--task-support-required` take them.
package conformancetools
