// Task status notifications (MCP 2025-11-25 notifications/tasks/status) as the official MCP
// TypeScript SDK client receives them from `toolgate mcp`, over stdio or streamable HTTP (the
// environment of mcp-client.mjs). Prints JSON lines on stdout for the Go test
// (mcp/taskstatus_test.go):
//
//   node mcp-taskstatus.mjs complete   count with MCP_KEY as a task: prints {"working": task}
//                                      once its working status arrived (the test then releases
//                                      the tool), then the report
//   node mcp-taskstatus.mjs cancel     wait as a task: once working and its progress arrived,
//                                      tasks/cancel, then the report
//   node mcp-taskstatus.mjs burst      burst (100 reports, then it returns) as a task with a
//                                      progress token, then the report
//
// The report: {statuses: [every status notification, in order], get: tasks/get once the terminal
// one arrived; cancelled, the tasks/cancel answer (cancel); events, the statuses and progress
// reports in the order they arrived ("status:working", "progress:halfway", "progress:7", ...)
// (cancel, burst)}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateTaskResultSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const IDEMPOTENCY_KEY = "io.toolgate/idempotencyKey";
const TERMINAL = ["completed", "failed", "cancelled"];
// Fails the run with what arrived, rather than hang until the test's deadline.
const NOTIFICATION_TIMEOUT_MS = 30000;

function transport() {
  if (process.env.MCP_TRANSPORT === "stdio") {
    const [command, ...args] = JSON.parse(process.env.MCP_COMMAND);
    return new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
  }
  return new StreamableHTTPClientTransport(new URL(process.env.MCP_URL));
}

const statuses = [];
const events = [];
const waiters = [];
function wake() {
  for (const w of waiters.splice(0)) w();
}
function onStatus(params) {
  statuses.push(params);
  events.push(`status:${params.status}`);
  wake();
}
function onProgress(p) {
  events.push(`progress:${p.message || p.progress}`);
  wake();
}

// until resolves once a status notification of taskId satisfies accept.
async function until(taskId, accept) {
  return await untilFound(() => statuses.find((s) => s.taskId === taskId && accept(s.status)), `a status notification of ${taskId}`);
}

async function untilFound(find, what) {
  const deadline = Date.now() + NOTIFICATION_TIMEOUT_MS;
  for (;;) {
    const found = find();
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no ${what}; got ${JSON.stringify(events)}`);
    await new Promise((resolve) => {
      waiters.push(resolve);
      setTimeout(resolve, 1000); // look at the deadline again
    });
  }
}

async function createTask(client, params, onprogress) {
  await client.listTools(); // caches each tool's execution.taskSupport
  const { task } = await client.request({ method: "tools/call", params }, CreateTaskResultSchema, { task: { ttl: 60000 }, onprogress });
  return task;
}

async function complete(client) {
  const key = process.env.MCP_KEY;
  const task = await createTask(client, { name: "count", arguments: { key }, _meta: { [IDEMPOTENCY_KEY]: key } });
  process.stdout.write(JSON.stringify({ working: await until(task.taskId, (s) => s === "working") }) + "\n");
  await until(task.taskId, (s) => TERMINAL.includes(s));
  return { statuses: statuses.filter((s) => s.taskId === task.taskId), get: await client.experimental.tasks.getTask(task.taskId) };
}

async function cancel(client) {
  // The request's progress token stays valid for the task's lifetime.
  const task = await createTask(client, { name: "wait", arguments: {} }, onProgress);
  await until(task.taskId, (s) => s === "working");
  await untilFound(() => events.includes("progress:halfway"), "progress report");
  const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
  await until(task.taskId, (s) => TERMINAL.includes(s));
  return { statuses: statuses.filter((s) => s.taskId === task.taskId), get: await client.experimental.tasks.getTask(task.taskId), cancelled, events };
}

async function burst(client) {
  const task = await createTask(client, { name: "burst", arguments: {} }, onProgress);
  await until(task.taskId, (s) => TERMINAL.includes(s));
  return { statuses: statuses.filter((s) => s.taskId === task.taskId), get: await client.experimental.tasks.getTask(task.taskId), events };
}

const scenarios = { complete, cancel, burst };
const client = new Client({ name: "toolgate-interop", version: "1.0.0" });
client.setNotificationHandler(TaskStatusNotificationSchema, (n) => onStatus(n.params));
await client.connect(transport());
try {
  const report = await scenarios[process.argv[2]](client);
  process.stdout.write(JSON.stringify(report) + "\n");
} finally {
  await client.close().catch(() => {});
}
