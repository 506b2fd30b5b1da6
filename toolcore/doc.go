// Package toolcore is the Tool contract of toolgate in pure Go: definitions, the registry, the
// untrusted tool-call boundary, validation before effects, the bounded serializer and linked
// tool-result messages. It imports nothing from Temporal; the durable path (packages workflows and
// activities) composes the same exported steps, so both paths give byte-identical results.
//
// The normative text is docs/contract.md of the project; this package documents the decisions that
// text leaves open.
//
// # Steps
//
// One call passes through five steps, each exported so the durable path can compose them:
//
//  1. Snapshot: [ParseToolCall] or [NewToolCall] turn untrusted input into an immutable [ToolCall].
//  2. Look up: [Registry.Get]; an unknown name becomes [NotFoundResult].
//  3. Validate: [Tool.Validate] runs the synchronous validator (panics recovered) and returns the
//     accepted value as JSON, or the linked error [Result].
//  4. Run: [Tool.Invoke] decodes the accepted JSON into the tool's argument type and runs Execute
//     with panic recovery.
//  5. Complete: [Complete] maps what the tool returned (output or error) to a linked [Result], or
//     lets a genuine [NonRecoverableToolError] escape.
//
// [Execute] is the in-process composition of these steps, with cancellation checked between them.
package toolcore
