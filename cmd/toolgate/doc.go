// Command toolgate is the one binary of toolgate: the embedded dev environment, a worker for any
// Temporal cluster, and the operator commands for tool calls.
//
//	toolgate dev                       Temporal server + Web UI + worker with the toolbox, on loopback
//	toolgate worker [--setup]          a worker with the toolbox against any Temporal frontend
//	toolgate call NAME [JSON]          run one call, print the result message (or a call on stdin)
//	toolgate result|status|cancel ID   follow a call by workflow ID (toolcall-<call ID>) or --call-id
//	toolgate history ID                export a call's history as JSON
//	toolgate replay FILE...            replay histories against this build's workflow code
//	toolgate tools [--json]            list the toolbox
//
// Every subcommand has --help with examples.
//
// # Layout
//
// One file per subcommand (dev.go, worker.go, call.go, ...), each with a newXCommand constructor
// listed once in the command table of main.go; shared flags live in conn.go (Temporal connection),
// registry.go (toolbox), target.go (which call), logging.go and env.go. Only main exits: commands
// return errors, and run maps them to exit codes (exit.go) and logs each once.
//
// # Configuration
//
// Flags win over environment variables, which win over defaults. The connection flags and
// variables are the Temporal CLI's: --address/TEMPORAL_ADDRESS (default 127.0.0.1:7233),
// -n/--namespace/TEMPORAL_NAMESPACE (default "default"), --api-key/TEMPORAL_API_KEY, --tls/
// TEMPORAL_TLS, --tls-cert-path, --tls-key-path, --tls-ca-path, --tls-server-name,
// --tls-disable-host-verification (TEMPORAL_TLS_CERT_PATH, ...). TLS is on when --tls is set, when
// any other TLS option is given, or when an API key is given, unless --tls=false. toolgate's own:
// --task-queue/TOOLGATE_TASK_QUEUE (default "toolgate"), --scope/TOOLGATE_SCOPE, --root/
// TOOLGATE_ROOT and --allow-host/TOOLGATE_ALLOW_HOSTS (toolbox), --log-format/TOOLGATE_LOG_FORMAT
// (console or json), --log-level/TOOLGATE_LOG_LEVEL, and for dev --data-dir/TOOLGATE_DATA_DIR.
//
// # Output and logging
//
// stdout carries only results: result messages, workflow IDs, status, history JSON, PASS/FAIL
// lines, dev's addresses. Every log line goes to stderr through zap (console by default, JSON with
// --log-format json), the Temporal SDK's lines included (internal/logging routes them); every line
// about a call carries toolCallId, toolName and workflowId.
//
// # Exit codes
//
//	0  success (call, result: isError false)
//	1  an error result (isError true); replay: a history failed
//	2  bad input or usage (flags, arguments, malformed call, unknown or conflicting ID)
//	3  fatal: the tool raised a NonRecoverableToolError; stop the agent run
//	4  canceled (Ctrl-C on call, toolgate cancel, the Web UI)
//	5  any other failure (connection, server, timeout, termination)
package main
