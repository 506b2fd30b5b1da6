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
// Approvals (the client declares form elicitation; MCP_TOOL names a tool of mcp/tasksext_test.go's
// worker, MCP_ITEM its item):
//   node mcp-taskstatus.mjs approve    MCP_TOOL as a task through callToolStream; the approval's
//                                      elicitation/create is answered accept, then the report
//   node mcp-taskstatus.mjs decline    the same, answered decline with the reason "not now"
//   node mcp-taskstatus.mjs operator   MCP_TOOL as a task: prints {"created": task}, then, after
//                                      a line on stdin, {"get": tasks/get} and at last the
//                                      report once tasks/result answered
//   node mcp-taskstatus.mjs early      prints {"ready": true} once it has listed the tools; after
//                                      a line on stdin, MCP_TOOL as a task, tasks/result at once
//                                      (the elicitation answered accept), prints {"asking":
//                                      tasks/get after that} and the report once it answered
// Their report: {messages: callToolStream's messages ("taskCreated", "taskStatus:<status>" once
// per change, "result"), elicitations: [the elicitation/create params received], result,
// statuses}.
//
// The report: {statuses: [every status notification, in order], get: tasks/get once the terminal
// one arrived; cancelled, the tasks/cancel answer (cancel); events, the statuses and progress
// reports in the order they arrived ("status:working", "progress:halfway", "progress:7", ...)
// (cancel, burst)}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema, TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { createInterface } from "node:readline";

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

const elicitations = [];

// approval runs MCP_TOOL as a task through callToolStream, which calls tasks/result once the
// task is input_required; the elicitation handler answers with answer.
async function approval(client, answer) {
  await client.listTools(); // caches each tool's execution.taskSupport
  elicitationAnswer = answer;
  const messages = [];
  let result;
  let taskId;
  const stream = client.experimental.tasks.callToolStream(
    { name: process.env.MCP_TOOL, arguments: { item: process.env.MCP_ITEM } }, undefined,
    { task: { ttl: 60000 }, signal: AbortSignal.timeout(NOTIFICATION_TIMEOUT_MS) }); // fails rather than poll forever
  for await (const message of stream) {
    let label = message.type;
    if (message.type === "taskCreated") taskId = message.task.taskId;
    if (message.type === "taskStatus") label += `:${message.task.status}`;
    if (message.type === "result") result = message.result;
    if (message.type === "error") throw message.error;
    if (messages[messages.length - 1] !== label) messages.push(label);
  }
  await until(taskId, (s) => TERMINAL.includes(s));
  return { messages, elicitations, result, statuses: statuses.filter((s) => s.taskId === taskId) };
}

let elicitationAnswer;
const approve = (client) => approval(client, { action: "accept", content: { approve: true } });
const decline = (client) => approval(client, { action: "decline", content: { reason: "not now" } });

// operator runs MCP_TOOL, whose approvals operators decide, as a task, and shows tasks/get at
// the test's pace; tasks/result then answers once the test has decided.
async function operator(client) {
  const task = await createTask(client, { name: process.env.MCP_TOOL, arguments: { item: process.env.MCP_ITEM } });
  process.stdout.write(JSON.stringify({ created: task }) + "\n");
  await nextLine();
  process.stdout.write(JSON.stringify({ get: await client.experimental.tasks.getTask(task.taskId) }) + "\n");
  const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
  await until(task.taskId, (s) => TERMINAL.includes(s));
  return { elicitations, result, statuses: statuses.filter((s) => s.taskId === task.taskId) };
}

// early calls tasks/result before the call can have begun to wait (the test runs no worker
// until it has asked), which the elicitation then reaches.
async function early(client) {
  await client.listTools();
  process.stdout.write(JSON.stringify({ ready: true }) + "\n");
  await nextLine();
  elicitationAnswer = { action: "accept", content: { approve: true } };
  const task = await createTask(client, { name: process.env.MCP_TOOL, arguments: { item: process.env.MCP_ITEM } });
  const result = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
  // Answered after tasks/result has had its first look at the call (its request went first).
  process.stdout.write(JSON.stringify({ asking: await client.experimental.tasks.getTask(task.taskId) }) + "\n");
  return { elicitations, result: await result };
}

// nextLine resolves with the next line on stdin, which is closed then (an open stdin would keep
// the process alive).
async function nextLine() {
  const stdin = createInterface({ input: process.stdin });
  const { value } = await stdin[Symbol.asyncIterator]().next();
  stdin.close();
  return value;
}

const scenarios = { complete, cancel, burst, approve, decline, operator, early };
const client = new Client({ name: "toolgate-interop", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
client.setNotificationHandler(TaskStatusNotificationSchema, (n) => onStatus(n.params));
client.setRequestHandler(ElicitRequestSchema, (request) => {
  elicitations.push(request.params);
  return elicitationAnswer ?? { action: "cancel" };
});
await client.connect(transport());
try {
  const report = await scenarios[process.argv[2]](client);
  process.stdout.write(JSON.stringify(report) + "\n");
} finally {
  await client.close().catch(() => {});
}
