// Package tooldefs renders tool definitions in the formats agents send to model providers and
// MCP clients: MCP Tool, OpenAI function tools and Anthropic tools. It is pure (it imports only
// toolcore) and works on [toolcore.ToolInfo], so the same code formats the local registry
// (Registry.Infos) and a worker's catalog listed from a client.
//
// # Formats
//
//   - MCP (tools/list entries): {"name","description","inputSchema","outputSchema"?,"annotations"}.
//     The annotations come from the side-effect class: readOnly is readOnlyHint true (and
//     destructiveHint false, idempotentHint true); idempotent is idempotentHint true,
//     destructiveHint true; unsafe is both false/true the way the MCP defaults assume the worst
//     (readOnlyHint false, destructiveHint true, idempotentHint false). openWorldHint is left out:
//     toolgate cannot know it. The input schema keeps its "$schema" (MCP's default dialect is
//     draft 2020-12 too).
//   - OpenAI (Chat Completions tools): {"type":"function","function":{"name","description",
//     "parameters","strict"?}}. Non-strict by default. Strict mode is opt-in and checked: every
//     object schema must list all its properties in "required" and set "additionalProperties":
//     false; a schema that does not qualify is an error rather than a request OpenAI refuses.
//   - Anthropic (Messages API tools): {"name","description","input_schema"}.
//
// For OpenAI and Anthropic the top-level "$schema" member is removed from the parameters: the
// provider fixes the dialect, and a model gains nothing from it. Everything else of the schema is
// passed through unchanged, in canonical form.
package tooldefs
