// Drives `toolgate mcp --listen` at MCP 2026-07-28 with the official 2026-07-28 TypeScript client
// (@modelcontextprotocol/client 2.4.0) and its tasks extension (@modelcontextprotocol/ext-tasks
// 0.2.2), for mcp/tasks_v2_ts_test.go, and prints one JSON line per step on stdout.
//
//   MCP_URL=http://127.0.0.1:PORT/mcp MCP_KEY=key MCP_KEY2=key2 node mcp-tasks-v2.mjs
//
// Steps: "quick" (echo through a tasks session: its outcome and the task requests it needed),
// "task" (count with MCP_KEY, which the test holds: a task, settled once the test releases it,
// after reading a line on stdin), "abort" (count with MCP_KEY2, which the test holds, called
// by a client without the extension and aborted once the test saw it run: the client closes the
// request's stream; the test checks the call was cancelled).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";
import { createInterface } from "node:readline";

const url = new URL(process.env.MCP_URL);
const VERSION = "2026-07-28";
const framing = {
  protocolVersion: VERSION,
  clientInfo: { name: "toolgate-tasks-v2", version: "1.0.0" },
  clientCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } },
};
const dispatched = [];

// rawDispatch POSTs one request on its own (the revision is stateless) and returns its outcome
// ({kind: "result"} or {kind: "error"}), from a JSON body or the SSE event that carries it.
let nextID = 1;
async function rawDispatch(request, options) {
  const id = nextID++;
  const outcome = (msg) => ("error" in msg ? { kind: "error", error: msg.error } : { kind: "result", result: msg.result });
  dispatched.push(request.method);
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": VERSION,
    "mcp-method": request.method,
  };
  const name = request.params?.name ?? request.params?.taskId;
  if (name !== undefined) headers["mcp-name"] = name;
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id, ...request }), signal: options?.signal });
  const text = await response.text();
  if ((response.headers.get("content-type") ?? "").includes("text/event-stream")) {
    for (const line of text.split("\n")) {
      if (!line.startsWith("data: ")) continue;
      const msg = JSON.parse(line.slice(6));
      if (msg.id === id && ("result" in msg || "error" in msg)) return outcome(msg);
    }
    throw new Error(`no response to ${request.method} in ${text}`);
  }
  try {
    return outcome(JSON.parse(text));
  } catch {
    throw new Error(`${request.method}: HTTP ${response.status} ${text} for ${JSON.stringify(request)}`);
  }
}

function step(name, fields) {
  process.stdout.write(JSON.stringify({ step: name, ...fields }) + "\n");
}

const client = new Client({ name: "toolgate-tasks-v2", version: "1.0.0" }, { capabilities: framing.clientCapabilities, versionNegotiation: { mode: { pin: VERSION } } });
await client.connect(new StreamableHTTPClientTransport(url));
const session = createTaskSessionFromClient(client, { endpointId: "toolgate", rawDispatch, v2RequestFraming: framing });
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
try {
  const started = Date.now();
  const quick = await (await session.callTool("echo", { text: "hi" })).settle();
  step("quick", { text: resultFromTaskOutcome(quick.outcome).content?.[0]?.text, dispatched: dispatched.splice(0), ms: Date.now() - started });

  const key = process.env.MCP_KEY;
  const execution = await session.callTool("count", { key }, { _meta: { "io.toolgate/idempotencyKey": key } });
  step("task-created", { dispatched: dispatched.splice(0) });
  await lines.next(); // the test releases the tool
  let settled;
  try {
    settled = await execution.settle();
    step("task", { text: resultFromTaskOutcome(settled.outcome).content?.[0]?.text, dispatched: dispatched.splice(0) });
  } catch (err) {
    step("task", { error: String(err?.message ?? err), dispatched: dispatched.splice(0) });
  }

  // A client without the tasks extension: its calls are answered synchronously.
  const plain = new Client({ name: "toolgate-plain-v2", version: "1.0.0" }, { versionNegotiation: { mode: { pin: VERSION } } });
  await plain.connect(new StreamableHTTPClientTransport(url));
  // Aborted once the test saw the tool start: the client closes the request's stream.
  const held = process.env.MCP_KEY2;
  const abort = new AbortController();
  const pending = plain.callTool({ name: "count", arguments: { key: held }, _meta: { "io.toolgate/idempotencyKey": held } },
    { signal: abort.signal }).then(() => "completed", () => "error");
  await lines.next(); // the tool runs
  abort.abort("enough");
  step("abort", { outcome: await pending });
  await lines.next(); // the test has seen the tool cancelled
  await plain.close().catch(() => {});
} finally {
  await session.close().catch(() => {});
  await client.close().catch(() => {});
}
step("done", {});
process.exit(0); // readline and the sessions' timers would keep the process alive
