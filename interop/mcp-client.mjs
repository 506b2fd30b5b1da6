// Drives `toolgate mcp` with the official MCP TypeScript SDK client, over stdio or streamable
// HTTP, and prints one JSON report on stdout for the Go test (mcp/interop_test.go) to check.
//
//   MCP_TRANSPORT=stdio MCP_COMMAND='["/path/to/server","arg"]' node mcp-client.mjs SCENARIO
//   MCP_TRANSPORT=http  MCP_URL=http://127.0.0.1:PORT/mcp       node mcp-client.mjs SCENARIO
//
// Scenarios: "basic" (list, call, error result, fatal error, a retried call with the same
// idempotency key), "cancel" (progress, then cancel the call once progress arrived, then wait
// until the tool has seen its context canceled).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const IDEMPOTENCY_KEY = "io.toolgate/idempotencyKey";

function transport() {
  if (process.env.MCP_TRANSPORT === "stdio") {
    const [command, ...args] = JSON.parse(process.env.MCP_COMMAND);
    return new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
  }
  return new StreamableHTTPClientTransport(new URL(process.env.MCP_URL));
}

function errorReport(err) {
  return { code: err.code, message: String(err.message), data: err.data ?? null };
}

async function basic(client) {
  const report = {};
  const { tools } = await client.listTools();
  report.tools = tools.map((t) => ({ name: t.name, annotations: t.annotations, inputSchemaType: t.inputSchema.type }));
  report.echo = await client.callTool({ name: "echo", arguments: { text: "hello" } });
  report.fails = await client.callTool({ name: "fails", arguments: {} });
  report.invalid = await client.callTool({ name: "echo", arguments: { text: 42 } });
  try {
    await client.callTool({ name: "fatal", arguments: {} });
    report.fatal = { code: 0 };
  } catch (err) {
    report.fatal = errorReport(err);
  }
  const key = process.env.MCP_KEY;
  const retried = { name: "count", arguments: { key }, _meta: { [IDEMPOTENCY_KEY]: key } };
  report.countFirst = await client.callTool(retried);
  report.countRetry = await client.callTool(retried);
  try {
    await client.callTool({ name: "count", arguments: { key: "other" }, _meta: { [IDEMPOTENCY_KEY]: key } });
    report.conflict = { code: 0 };
  } catch (err) {
    report.conflict = errorReport(err);
  }
  return report;
}

async function cancel(client) {
  const report = { progress: [] };
  const abort = new AbortController();
  try {
    await client.callTool({ name: "wait", arguments: {} }, CallToolResultSchema, {
      signal: abort.signal,
      onprogress: (p) => {
        report.progress.push(p);
        abort.abort("enough");
      },
    });
    report.outcome = "completed";
  } catch (err) {
    report.outcome = "error";
    report.error = String(err);
  }
  // Returns once the canceled call's tool has seen its context canceled.
  report.observed = await client.callTool({ name: "observed", arguments: {} });
  return report;
}

const scenarios = { basic, cancel };
const client = new Client({ name: "toolgate-interop", version: "1.0.0" });
await client.connect(transport());
try {
  const report = await scenarios[process.argv[2]](client);
  process.stdout.write(JSON.stringify(report) + "\n");
} finally {
  await client.close();
}
