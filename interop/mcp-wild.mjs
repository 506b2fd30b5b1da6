// Drives `toolgate mcp` with the official MCP TypeScript SDK 1.x client for the findings of issue
// 34 item 5 (mcp/wild_ts_test.go), and prints one JSON report on stdout.
//
//   MCP_TRANSPORT=stdio MCP_COMMAND='["/path/to/server","arg"]' node mcp-wild.mjs SCENARIO
//   MCP_TRANSPORT=http  MCP_URL=http://127.0.0.1:PORT/mcp       node mcp-wild.mjs SCENARIO
//
// Scenarios: "progress" (calls burst, whose last report comes just before its result, MCP_CALLS
// times with onprogress, reporting each call's last report), "errors" (an unknown tool and an
// invalid call, reporting the errors, the HTTP requests the transport made and every error it
// logged), "cancel" (progress, then an abort, then a ping once the call is cancelled, reporting
// every error the client logged: a reply to the cancelled request would be one).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const requests = [];
function transport() {
  if (process.env.MCP_TRANSPORT === "stdio") {
    const [command, ...args] = JSON.parse(process.env.MCP_COMMAND);
    return new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
  }
  const recording = async (url, init) => {
    const headers = new Headers(init?.headers);
    const response = await fetch(url, init);
    requests.push({ method: init?.method ?? "GET", lastEventId: headers.get("last-event-id"), status: response.status,
      contentType: response.headers.get("content-type") });
    return response;
  };
  return new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), {
    fetch: recording,
    reconnectionOptions: { initialReconnectionDelay: 10, maxReconnectionDelay: 100, reconnectionDelayGrowFactor: 2, maxRetries: 2 },
  });
}

async function progress(client) {
  const calls = [];
  for (let i = 0; i < Number(process.env.MCP_CALLS ?? 5); i++) {
    let last = null;
    await client.callTool({ name: "burst", arguments: {} }, CallToolResultSchema, { onprogress: (p) => (last = p) });
    calls.push(last);
  }
  return { calls };
}

async function errorOf(promise) {
  try {
    await promise;
    return null;
  } catch (err) {
    return { code: err.code ?? null, message: String(err.message) };
  }
}

async function errors(client) {
  const report = {};
  report.unknown = await errorOf(client.callTool({ name: "no_such_tool", arguments: {} }));
  report.conflict = await errorOf(client.callTool({ name: "echo", arguments: { text: 1 }, _meta: { "io.toolgate/idempotencyKey": "" } }));
  await client.ping(); // anything the transport did after the errors came before this answer
  return report;
}

async function cancel(client) {
  const key = process.env.MCP_KEY;
  const abort = new AbortController();
  const report = {};
  report.outcome = await errorOf(client.callTool({ name: "wait", arguments: {}, _meta: { "io.toolgate/idempotencyKey": key } },
    CallToolResultSchema, { signal: abort.signal, onprogress: () => abort.abort("enough") }));
  // Until the call has closed (its handler answers right after), then one more round trip.
  for (;;) {
    const task = await client.experimental.tasks.getTask("mcp/toolcall-" + key);
    if (task.status !== "working") break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await client.callTool({ name: "echo", arguments: { text: "after" } });
  await client.ping();
  return report;
}

const logged = [];
const client = new Client({ name: "toolgate-wild", version: "1.0.0" });
client.onerror = (err) => logged.push(String(err?.message ?? err));
await client.connect(transport());
try {
  const report = await { progress, errors, cancel }[process.argv[2]](client);
  report.logged = logged;
  report.requests = requests;
  process.stdout.write(JSON.stringify(report) + "\n");
} finally {
  await client.close().catch(() => {});
}
