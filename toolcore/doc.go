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
//
// # Definitions
//
// [Define] reads each field of a [Definition] once and keeps the copies in an immutable [Tool]:
// reassigning the Definition's fields or funcs afterwards changes nothing. It rejects, with
// INVALID_TOOL_DEFINITION, a blank name or description, a name outside ^[A-Za-z0-9_-]{1,64}$, a
// description that is not UTF-8, a nil Execute, negative durations or attempts, an unknown
// [SideEffect], MaxAttempts above 1 on an Unsafe tool, and a task queue with surrounding space.
// Validate is optional where the input schema constrains the arguments: a nil Validate runs the
// schema validator (below), so it needs a struct argument type (whose generated schema names the
// properties) or an explicit InputSchema; with neither, A = any, [Arguments], map[string]any,
// json.RawMessage or another type whose generated schema is just {"type":"object"}, nothing
// would check the arguments and Define rejects the definition. Defaults: Timeout 1 minute,
// HeartbeatTimeout 1 minute, IdleHeartbeat half the HeartbeatTimeout (at most 30 s), MaxAttempts
// 3 (1 for Unsafe).
//
// The argument type A crosses from workflow to activity as JSON, so Define checks it by type:
// funcs, channels, complex numbers and unsafe pointers cannot be encoded; non-empty interfaces
// cannot be decoded (the empty interface can: its values come back as generic JSON values with
// numbers as json.Number); map keys must be strings, integers or text marshalers; unexported
// struct fields would be silently lost (tag them `json:"-"`); a type with only half of
// json.Marshaler/json.Unmarshaler (or of the Text pair) is asymmetric. A type with both halves is
// trusted by type and checked per value: every accepted value is encoded with encoding/json
// (HTML escaping off, map keys sorted) and decoded back into a fresh A (strictly: unknown fields
// and trailing data are errors, numbers in `any` are json.Number); if either fails the call is
// TOOL_VALIDATION_FAILED and nothing runs. Invoke decodes that JSON into a fresh A for every run,
// in process too, so Execute never shares memory with the validator and both paths see the same
// value.
//
// # Schemas
//
// Every tool has an input JSON Schema, the one models are shown ([Tool.InputSchema]): the
// explicit [Definition.InputSchema], or one generated from the argument type A with
// github.com/invopop/jsonschema (draft 2020-12: json tags name the properties, a field without
// omitempty is required, `jsonschema:"description=...,enum=a,enum=b"` tags add descriptions and
// enums, additionalProperties is false, named nested structs go to $defs, no $id; json.Number is a
// number; for [Arguments] and types that are not objects the schema is {"type":"object"}). When
// Validate maps the arguments into a differently shaped A, give InputSchema explicitly. An output
// schema is optional ([Definition.OutputSchema]). Define canonicalizes each schema (the form of
// Arguments: keys sorted, no whitespace) and compiles it with
// github.com/santhosh-tekuri/jsonschema/v6, never loading external references; a schema that
// does not parse, does not compile, or whose top-level "type" is not "object" (input only) is
// INVALID_TOOL_DEFINITION. Generation and canonical form are deterministic, so the same
// definition gives the same bytes and [Tool.DefinitionHash] on every machine.
//
// The schema validator: a nil Validate (allowed where the input schema constrains the
// arguments, above) checks the arguments against the input schema and then decodes them strictly
// into A with [Arguments.Decode] (so 1.0 is still not an integer and integers beyond 2^53 stay
// exact); [Definition.CheckSchema] runs the schema check before an author's Validate. It is
// pure and deterministic, fit for workflow code: the arguments reach the schema library with
// numbers as json.Number, never float64; number literals whose exponent is beyond
// ±[MaxSchemaExponent] are refused first (exact rationals of huge exponents are slow); of several
// violations the reason names the first by instance location (JSON Pointer tokens in order, a
// parent before its members), then schema location, then text. Reasons read
// `"left": expected number, got string`, `"left" is required`, `unknown argument "x"`,
// `"unit": must be one of "s", "ms", got "h"`, `"items/1/name": expected string, got number`.
//
// # Validators
//
// A validator is synchronous and pure: on the durable path it runs in deterministic workflow
// code. It must not block, sleep, wait on channels or locks, start goroutines, do I/O, read the
// clock or randomness, or call runtime.Goexit. In process it simply runs on the caller's
// goroutine; the durable path guards it with a deadline and fails it with TOOL_VALIDATION_FAILED
// rather than hang. Its verdicts: [Accept] continues; [Reject] with a non-blank reason is
// TOOL_ARGUMENTS_INVALID carrying the reason verbatim (bounded like every message, below); a
// panic (the panic value's text only), the zero [Decision] or a blank reason is
// TOOL_VALIDATION_FAILED. A panic carrying a NonRecoverableToolError does not stop the run from a
// validator: validation failures are always results.
//
// # Execution
//
// [ExecuteWith] runs the tool on its own goroutine with a context that carries ctx's
// cancellation and an [Execution] (tool call ID, tool name, attempt 1, idempotency key
// "toolcall-<id>" unless given, progress reporter). Cancellation is checked before validation,
// after validation, before execution, while the tool runs (a select on ctx.Done, so cancellation
// wins even if the tool ignores ctx: its goroutine is left to finish and its result discarded),
// after the tool returns, and after serialization; when it wins, the executor returns
// context.Cause(ctx) and no result. The tool's context is canceled when the executor returns. A
// tool that calls runtime.Goexit gets TOOL_EXECUTION_FAILED rather than hanging the executor.
//
// [ReportProgress] never blocks the tool: the executor's [Execution.OnProgress] must return
// promptly (the in-process executor hands reports to [ExecuteOptions.OnProgress] on another
// goroutine, latest report wins, the last one is always delivered), and a panic in it is
// recovered.
//
// # Errors
//
// Contract errors ([ContractError], INVALID_TOOL_DEFINITION, INVALID_TOOL_BATCH,
// DUPLICATE_TOOL_NAME, INVALID_TOOL_CALL) are Go errors, minted only by toolcore. Everything a
// tool does wrong is a result: an error returned by Execute is TOOL_EXECUTION_FAILED with
// [ErrorText] of it, a panic is a [PanicError] whose text is the panic value's text (strings as
// they are; errors and Stringers through their method under recover; numbers and booleans by
// reflection; anything else by its type name only, so no address leaks) and whose stack is kept
// for logs, and output the serializer refuses is TOOL_OUTPUT_SERIALIZATION_FAILED.
//
// Only a genuine [NonRecoverableToolError], minted by [NewNonRecoverableToolError] or
// [WrapNonRecoverable], escapes [Complete] and [Execute] as an error (the genuine error itself is
// returned, not its wrapping). [AsNonRecoverable] finds it anywhere in the chain: through %w,
// errors.Join, As methods and a panic's value, skipping branches whose Unwrap or As panics, within
// 1024 errors. Look-alikes stay recoverable: a struct literal of the type (it lacks the
// unexported brand), a same-named type of another package, an error whose Type() says
// "NonRecoverableToolError", and a *ContractError returned by tool code. The brand is a safety
// rail against accidents, not a security boundary: any code in the process can call the
// constructor.
//
// # Messages
//
// Every model-visible message (ErrorText, rejection reasons, panic texts) is valid UTF-8 (each
// invalid byte becomes U+FFFD), at most [MaxErrorTextCodePoints] (1024) code points including a
// final "…" when cut, and never blank ([DefaultErrorText]). A quarter of the 4096-code-point
// content cap leaves room for JSON escaping; if escaping still overflows, [ErrorResult] cuts the
// message further, so error content is always complete JSON,
// {"error":{"code":"...","message":"..."}}, produced by [Serialize] (keys sorted). The unknown
// tool message is exactly `Unknown Tool "<name>"`; a worker records
// [UnknownToolOnQueueMessage], which goes on to name its task queue and (at most
// [MaxListedTools] of) its tools.
//
// # Results
//
// [Result] is a value whose fields cannot be changed through it. [Result.MarshalJSON] writes the
// wire shape in the documented field order with encoding/json's string escaping and HTML escaping
// off; note that json.Marshal of a Result re-escapes <, > and & (encoding/json compacts a
// marshaler's output with HTML escaping), which decodes to the same Result. [Result.UnmarshalJSON]
// is strict: exactly the six fields, once each, of the right JSON types, role "toolResult", id
// "tool-result-" + toolCallId, non-blank toolCallId and toolName, content within the cap, and a
// known code in error content.
//
// A success's content is the output as [Serialize] renders it (JSON), except an output of type
// [Text], which is the content as it is (capped, valid UTF-8): prose such as a mounted MCP
// server's text reaches the model without JSON quotes.
package toolcore
