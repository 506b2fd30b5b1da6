// Drives a tool that asks mid-run (mcp/input_test.go) with the official MCP TypeScript SDK client
// over streamable HTTP at 2025-11-25: the client declares elicitation and sampling, accepts every
// elicitation with {confirm: true}, answers sampling with "Paris", and prints one JSON report:
// what it was asked and the results of the tools "proceed" and "capital".
//
//   MCP_URL=http://127.0.0.1:PORT/mcp node mcp-ask.mjs
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const asked = [];
const client = new Client({ name: "toolgate-interop-ask", version: "1.0.0" }, { capabilities: { elicitation: {}, sampling: {} } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push({ method: "elicitation/create", message: req.params.message });
  return { action: "accept", content: { confirm: true } };
});
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  asked.push({ method: "sampling/createMessage", message: req.params.messages[0].content.text });
  return { role: "assistant", model: "ts-model", content: { type: "text", text: "Paris" } };
});
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.MCP_URL)));
try {
  const proceed = await client.callTool({ name: "proceed", arguments: {} });
  const capital = await client.callTool({ name: "capital", arguments: {} });
  process.stdout.write(JSON.stringify({ asked, proceed, capital }) + "\n");
} finally {
  await client.close().catch(() => {});
}
