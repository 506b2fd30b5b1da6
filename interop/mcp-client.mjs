// Drives `toolgate mcp` with the official MCP TypeScript SDK client, over stdio or streamable
// HTTP, and prints one JSON report on stdout for the Go test (mcp/interop_test.go) to check.
//
//   MCP_TRANSPORT=stdio MCP_COMMAND='["/path/to/server","arg"]' node mcp-client.mjs SCENARIO
//   MCP_TRANSPORT=http  MCP_URL=http://127.0.0.1:PORT/mcp       node mcp-client.mjs SCENARIO
//
// Scenarios: "basic" (list, call, error result, fatal error, a retried call with the same
// idempotency key), "cancel" (progress, then cancel the call once progress arrived, then wait
// until the tool has seen its context canceled), "held" (first prints {"pid": <stdio server's
// pid or null>} on a line of its own, then calls count with MCP_KEY as idempotency key and
// reports how the call ended: the test kills the server meanwhile), "retry" (the same call,
// reporting its result), and the MCP tasks utility: "task-start" (count with MCP_KEY as a task,
// reporting the task), "task-finish" (tasks/get, tasks/result, tasks/list and tasks/cancel of
// MCP_TASK_ID, maybe on another server process), "task-cancel" (wait as a task, then cancel it),
// "logs" (logging/setLevel info, then chatty with a progress token: its progress and log
// notifications in the order the client handled them).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

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

function countByKey() {
  const key = process.env.MCP_KEY;
  return { name: "count", arguments: { key }, _meta: { [IDEMPOTENCY_KEY]: key } };
}

async function held(client, t) {
  // The streamable HTTP transport reports a lost connection as an error and leaves the request
  // pending (it would resume a stream the server made resumable): give up on the first error, as
  // an agent would, then retry with the same key.
  const abort = new AbortController();
  client.onerror = (err) => abort.abort(err);
  process.stdout.write(JSON.stringify({ pid: t.pid ?? null }) + "\n");
  try {
    const result = await client.callTool(countByKey(), CallToolResultSchema, { signal: abort.signal });
    return { outcome: "completed", result };
  } catch (err) {
    return { outcome: "error", error: String(err) };
  }
}

async function retry(client) {
  return { result: await client.callTool(countByKey()) };
}

// callAsTask sends tools/call with a "task" member and returns the CreateTaskResult's task.
async function callAsTask(client, params, onprogress) {
  const { tools } = await client.listTools(); // caches each tool's execution.taskSupport
  const created = await client.request({ method: "tools/call", params }, CreateTaskResultSchema, { task: { ttl: 60000 }, onprogress });
  return { task: created.task, taskSupport: tools.find((t) => t.name === params.name)?.execution?.taskSupport ?? null };
}

async function taskStart(client) {
  return await callAsTask(client, countByKey());
}

async function settle(promise) {
  try {
    return { value: await promise };
  } catch (err) {
    return { error: errorReport(err) };
  }
}

async function taskFinish(client) {
  const taskId = process.env.MCP_TASK_ID;
  const report = { capabilities: client.getServerCapabilities()?.tasks ?? null };
  // The test releases the task's tool once it has read this line.
  process.stdout.write(JSON.stringify({ before: await client.experimental.tasks.getTask(taskId) }) + "\n");
  report.result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
  report.after = await client.experimental.tasks.getTask(taskId);
  // The visibility store lags history by a moment: look again until listed, for a while.
  report.listed = false;
  for (let attempt = 0; attempt < 100 && !report.listed; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    let cursor;
    do {
      const page = await client.experimental.tasks.listTasks(cursor);
      report.listed ||= page.tasks.some((t) => t.taskId === taskId && t.status === report.after.status);
      cursor = page.nextCursor;
    } while (cursor && !report.listed);
  }
  report.cancelTerminal = await settle(client.experimental.tasks.cancelTask(taskId));
  report.unknown = await settle(client.experimental.tasks.getTask("toolcall-no-such-task"));
  return report;
}

async function taskCancel(client) {
  let progressed;
  const progress = new Promise((resolve) => (progressed = resolve));
  const { task } = await callAsTask(client, { name: "wait", arguments: {} }, progressed);
  const report = { created: task };
  // The request's progress token stays valid for the task's lifetime.
  report.progress = await progress;
  report.cancelled = await client.experimental.tasks.cancelTask(task.taskId);
  report.get = await client.experimental.tasks.getTask(task.taskId);
  report.result = await settle(client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema));
  // Returns once the canceled task's tool has seen its context canceled.
  report.observed = await client.callTool({ name: "observed", arguments: {} });
  return report;
}

async function logs(client) {
  const events = [];
  let heard;
  const allHeard = new Promise((resolve) => (heard = resolve));
  const hear = (e) => {
    events.push(e);
    if (events.length >= 5) heard();
  };
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) =>
    hear({ level: n.params.level, logger: n.params.logger, data: n.params.data }),
  );
  await client.setLoggingLevel("info");
  const result = await client.callTool({ name: "chatty", arguments: {} }, CallToolResultSchema, {
    onprogress: (p) => hear({ progress: p.progress, total: p.total }),
  });
  // Every notification was sent before the result; a client may handle the last ones just after.
  let timer;
  await Promise.race([allHeard, new Promise((resolve) => (timer = setTimeout(resolve, 5000)))]);
  clearTimeout(timer);
  return { events, result };
}

const scenarios = { basic, cancel, held, retry, logs, "task-start": taskStart, "task-finish": taskFinish, "task-cancel": taskCancel };
const client = new Client({ name: "toolgate-interop", version: "1.0.0" });
const t = transport();
await client.connect(t);
try {
  const report = await scenarios[process.argv[2]](client, t);
  process.stdout.write(JSON.stringify(report) + "\n");
} finally {
  // Closing a transport whose server was killed may fail: the report is out already.
  await client.close().catch(() => {});
}
