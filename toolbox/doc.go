// Package toolbox holds ready tools for toolgate, safe by default: echo, add, sleep, http_get,
// inside an operator-chosen directory only, read_file, list_dir and write_file, and with a
// sandbox, exec and the workspace file tools.
//
//	reg, err := toolbox.New(toolbox.Config{Root: "/srv/agent-files"})
//
// # Tools
//
// All are ReadOnly (the durable path may retry them), except write_file.
//
//   - echo {"text":"hi"} gives {"text":"hi"}. It echoes the one string member rather than the
//     whole arguments object, so its validator is as strict as every other.
//   - add {"left":20,"right":22} gives {"sum":42}. Literals without fraction or exponent are
//     exact integers of up to 1000 digits; a sum within ±(2^53-1) is a JSON number and beyond it
//     a string "<digits>n" (the serializer's big.Int form), because JSON readers that use
//     doubles would round it silently. Other numbers (20.5, 1e3) are added exactly at 256 bits
//     and rounded once to the nearest float64, so 0.1 + 0.2 gives 0.3.
//   - sleep {"seconds":N} waits N whole seconds (0..3600), reporting toolcore.Progress
//     {completed, total, message} after every second, and returns as soon as its context is
//     canceled. It gives {"seconds":N}.
//   - http_get {"url":"https://..."} gives {"url","status","headers","body","truncated"}; url is
//     the final URL after redirects, headers a small subset (content-type, content-length,
//     content-language, last-modified, etag, location, retry-after), body the text of the
//     response (left out, with "binary":true, unless it is UTF-8 without NUL bytes). Non-2xx
//     statuses are results, not errors.
//   - read_file {"path":"a.txt","offset":0} gives {"path","size","offset","content",
//     "truncated","nextOffset"}; a model reads a long file by calling again at nextOffset.
//   - list_dir {"path":"."} gives {"path","entries","truncated"}, entries sorted, directories
//     ending in "/".
//   - write_file {"path":"a.txt","content":"..."} creates or replaces a regular file (at most
//     MaxWriteBytes of UTF-8; the parent directory must exist) and gives {"path","bytes"}. It is
//     Unsafe and requires approval: every call waits for a human decision bound to its exact
//     arguments before anything is written (toolgate approve / reject). It writes a temporary
//     file beside the target and renames it over it, never in place, so a hard link to a file
//     outside the root is replaced, not written through.
//
// # Sandbox tools
//
// With Config.Sandbox (sandbox.go) the toolbox serves the tools of a coding agent, each working
// in the workspace of the call's agent run (toolcore.CallRun; the idempotency key of a call of
// no run), restored from the store the workers share before the call and committed after a call
// that changed it (package sandbox, docs/sandbox.md):
//
//   - exec {"argv":[...]} or {"shell":"..."}, with "stdin", "env" (only the names in
//     Sandbox.Env, listed in its input schema), "dir" and "timeout", runs the command under
//     bubblewrap and gives {"exitCode","signal","stdout","stderr","stdoutBytes","stderrBytes",
//     "truncated","attached","workspace":{"version","changed"}}: the streams' tails, as much as
//     fits the result; with Sandbox.Parts the whole streams are attached as parts. A non-zero
//     exit is a result; a limit that ended the command, another worker's commit in between
//     (sandbox.ErrConflict) or a workspace over its bound is an error result, and the command's
//     changes are discarded. It is Unsafe with a Reconcile that reads the workspace's head: a
//     lost attempt that committed is found with the result it recorded; one that committed
//     nothing left nothing, and runs again when the command has no network
//     (RerunWhenNotReconciled without Sandbox.AllowHosts); when other calls committed since it
//     started, its outcome is unknown.
//   - Sandbox.Commands: tools that run one fixed command, without arguments; Idempotent ones
//     are retried.
//   - workspace_write_file {"path","content","executable"} (Idempotent, creates the directories
//     it needs, owned by the sandbox's user), workspace_read_file and workspace_list_dir
//     (ReadOnly): read_file, list_dir and write_file's code with the workspace as the root.
//
// A call that runs again after its call committed (an idempotent command retried) returns the
// recorded result and runs nothing.
//
// # Validation
//
// Validators are strict and pure: unknown members, wrong types and out-of-range values are
// rejected (TOOL_ARGUMENTS_INVALID) with a reason a model can act on, such as
// `"seconds" must be between 0 and 3600` or `unknown argument "x"; allowed: "left", "right"`.
// Validators read only the arguments and the package constants, never the Config: they run in
// workflow code, and a history must replay to the same decisions whatever the worker's Config.
// Policies that depend on the Config (allowed hosts, the served directory) are enforced when the
// tool runs, and their refusals are TOOL_EXECUTION_FAILED results with an explanation.
//
// # Output size
//
// A result's content is capped at toolcore.MaxContentCodePoints. Text and lists are shortened
// here until the whole output object fits, and echoed paths and URLs are cut to 512 characters,
// so "truncated" and the other fields always arrive; HTTPMaxBytes and ReadMaxBytes bound what is
// read, not what fits. "truncated" is true whenever something was left out, binary content
// included: a binary file larger than ReadMaxBytes says where the rest starts (nextOffset), and a
// body cut at HTTPMaxBytes (after gzip decoding) says truncated even when it is binary.
//
// # HTTP safety
//
// http_get reaches http and https URLs on public addresses only. Refused unless the operator
// lists them in Config.AllowHosts: loopback, private (RFC 1918, fc00::/7), link-local
// (169.254/16, fe80::/10), carrier-grade NAT (100.64/10), unspecified, multicast, broadcast,
// documentation and other special-purpose blocks, and cloud metadata addresses
// (169.254.169.254, fd00:ec2::254, 100.100.100.200) and names (metadata.google.internal and all
// of .internal, metadata.goog, localhost and .localhost). IPv4-mapped IPv6 addresses and the
// IPv4 inside the NAT64 prefix 64:ff9b::/96 are judged as IPv4.
//
// The check happens where it cannot be bypassed: the transport's dialer resolves the host,
// checks every address, and connects to exactly those addresses (a DNS answer that changes
// between check and connect is never used), with a net.Dialer Control hook that checks the
// socket address once more. It runs on every connection, so every redirect is checked too;
// redirects are also checked for scheme and host syntax and bounded in number (past the bound,
// the redirect response itself is the result). The validator refuses host spellings that
// resolvers may read as IPv4 (2130706433, 0177.0.0.1, 0x7f.1, 127.1), credentials in URLs and
// schemes other than http and https. Proxies are never used, not even from the environment: a
// proxy would connect on our behalf and hide the real destination. Each call is bounded by
// HTTPTimeout (connect, redirects, headers and body) and reads at most HTTPMaxBytes of body.
// Timeouts and network errors are marked toolcore.Transient; refusals are not. A refusal says
// that a name does not resolve to a public address, never which address or what kind (that would
// make http_get an oracle for internal DNS); Config.Logger receives both for the operator.
//
// # File safety
//
// read_file, list_dir and write_file are registered only when Config.Root is set. Every call opens the root
// with os.OpenRoot and resolves the path through it, so ".." above the root, absolute paths,
// and symbolic links that point outside the root or are absolute are refused by the walk
// itself at access time; a link swapped after validation gains nothing. The validator refuses
// empty, absolute and NUL-holding paths and any ".." element first, with a clear reason.
// Both tools check the type of what a path names before they open it, and again on what they
// opened: read_file reads only regular files, list_dir only directories, so a FIFO or a device
// node is refused without being opened (opening one can block or have effects). The opens are
// non-blocking, and list_dir's uses O_DIRECTORY, so a node swapped in between cannot hang a
// worker. read_file reads at most ReadMaxBytes per call; list_dir reads at most 4096 entries and
// returns at most ListMaxEntries. Error messages name the path the model gave, never the
// operator's root; results echo it cut to 512 characters.
//
// # Testing
//
// Config.Ticker and Config.Resolver are injectable, so sleep and name resolution are tested
// without waiting or real DNS.
package toolbox
