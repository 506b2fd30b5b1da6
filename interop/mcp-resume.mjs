// Calls toolgate's test tool "resumable" once with the official MCP TypeScript SDK client over
// streamable HTTP, with a progress token, through a proxy that cuts the call's connection
// mid-call (mcp/resume_ts_test.go), and prints one JSON report on stdout: the progress reports
// received, the resumption tokens (SSE event IDs) in the order the transport saw them, the
// errors the transport reported, and the result.
//
//   MCP_URL=http://127.0.0.1:PORT/mcp node mcp-resume.mjs
//
// The transport resumes a dropped stream by itself (GET with Last-Event-ID); the reconnection
// delays are cut to milliseconds so the test stays short.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const report = { progress: [], tokens: [], errors: [] };
const transport = new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), {
  reconnectionOptions: { initialReconnectionDelay: 10, maxReconnectionDelay: 100, reconnectionDelayGrowFactor: 2, maxRetries: 3 },
});
const client = new Client({ name: "toolgate-resume", version: "1.0.0" });
client.onerror = (err) => report.errors.push(String(err?.message ?? err));
await client.connect(transport);
try {
  report.result = await client.callTool({ name: "resumable", arguments: {} }, CallToolResultSchema, {
    onprogress: (p) => report.progress.push(p),
    onresumptiontoken: (token) => report.tokens.push(token),
  });
} catch (err) {
  report.error = String(err);
}
process.stdout.write(JSON.stringify(report) + "\n");
await client.close();
