// Drives toolgate's durable contract from outside, with the official Temporal TypeScript client
// and the recipe of toolcall.mjs, and prints what it observed as one JSON object on stdout. The Go
// test internal/interop starts the server and a toolbox worker, runs this, and asserts.
//
// Environment: TEMPORAL_ADDRESS (host:port), TEMPORAL_NAMESPACE, TOOLGATE_TASK_QUEUE.
import { Connection, Client, WorkflowFailedError, CancelledFailure, ApplicationFailure } from '@temporalio/client';
import { CallConflictError, callPrincipal, executeCall, startCall, workflowId } from './toolcall.mjs';

const address = process.env.TEMPORAL_ADDRESS;
const namespace = process.env.TEMPORAL_NAMESPACE || 'default';
const taskQueue = process.env.TOOLGATE_TASK_QUEUE;
if (!address || !taskQueue) {
  console.error('contract.mjs: set TEMPORAL_ADDRESS and TOOLGATE_TASK_QUEUE');
  process.exit(2);
}
// Scope by the task queue, so runs never meet each other's workflow IDs.
const opts = { taskQueue, scope: taskQueue };
const call = (id, name, args) => ({ type: 'toolCall', id, name, arguments: args });

// resultBytes returns the recorded result payload of a completed call exactly as stored.
async function resultBytes(client, callId) {
  const history = await client.workflow.getHandle(workflowId(callId, taskQueue)).fetchHistory();
  const closed = history.events[history.events.length - 1].workflowExecutionCompletedEventAttributes;
  return Buffer.from(closed.result.payloads[0].data).toString('utf8');
}

// failure describes how a call ended without a result.
function failure(err) {
  if (err instanceof WorkflowFailedError) {
    const cause = err.cause;
    if (cause instanceof CancelledFailure) return { kind: 'canceled' };
    if (cause instanceof ApplicationFailure) return { kind: 'failed', type: cause.type, message: cause.message };
    return { kind: 'failed', cause: String(cause) };
  }
  if (err instanceof CallConflictError) return { kind: 'conflict', message: err.message };
  return { kind: 'error', name: err?.name, message: String(err?.message ?? err) };
}

async function outcome(promise) {
  try {
    return { result: await promise };
  } catch (err) {
    return failure(err);
  }
}

const connection = await Connection.connect({ address });
const client = new Client({ connection, namespace });
const out = {};
try {
  // Exact result bytes, as recorded in history, and as the client decodes them.
  const add = call('ts-add-1', 'add', { left: 20, right: 22 });
  out.add = await outcome(executeCall(client, add, opts));
  out.addBytes = await resultBytes(client, 'ts-add-1');

  // Resubmitting a completed call returns its recorded result (arguments in another key order)...
  out.resubmitCompleted = await outcome(executeCall(client, call('ts-add-1', 'add', { right: 22, left: 20 }), opts));
  // ...and the same ID with other arguments is refused, not answered with the old result.
  out.conflict = await outcome(executeCall(client, call('ts-add-1', 'add', { left: 1, right: 1 }), opts));

  out.unknownTool = await outcome(executeCall(client, call('ts-nope-1', 'nope', {}), opts));
  out.invalidArguments = await outcome(executeCall(client, call('ts-bad-args-1', 'add', { left: 'twenty', right: 22 }), opts));

  // A malformed call (no arguments), started without the recipe: the workflow fails INVALID_TOOL_CALL.
  const malformed = await client.workflow.start('ToolCallWorkflow', {
    args: [{ type: 'toolCall', id: 'ts-malformed-1', name: 'add' }],
    taskQueue,
    workflowId: workflowId('ts-malformed-1', taskQueue),
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
  });
  out.malformed = await outcome(malformed.result());

  // A non-ASCII call ID through the escaping rule...
  out.nonASCIIWorkflowId = workflowId('ts-é 1', taskQueue);
  out.nonASCII = await outcome(executeCall(client, call('ts-é 1', 'echo', { text: 'héllo' }), opts));
  // ...and one started under the raw ID, ignoring the rule: it fails fast instead of never ending.
  const raw = await client.workflow.start('ToolCallWorkflow', {
    args: [call('ts-é-raw', 'echo', { text: 'x' })],
    taskQueue,
    workflowId: `${taskQueue}/toolcall-ts-é-raw`,
  });
  out.rawNonASCII = await outcome(raw.result());

  // A call for a principal: the tool reads it, describe shows it.
  const principal = { issuer: 'https://idp.example', subject: 'ts-alice', groups: ['guests'] };
  out.principal = await outcome(executeCall(client, call('ts-whoami-1', 'whoami', {}), { ...opts, principal }));
  out.principalMemo = await callPrincipal(client.workflow.getHandle(workflowId('ts-whoami-1', taskQueue)));

  // Cancel a running sleep: resubmitting while it runs attaches to it; cancel ends it Canceled.
  const sleep = call('ts-sleep-1', 'sleep', { seconds: 60 });
  const handle = await startCall(client, sleep, opts);
  for (;;) {
    const desc = await handle.describe();
    if ((desc.raw.pendingActivities ?? []).some((a) => a.state === 2 /* STARTED */)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const attached = await startCall(client, sleep, opts);
  out.resubmitRunning = { sameRun: (await attached.describe()).runId === (await handle.describe()).runId };
  const t0 = performance.now();
  await handle.cancel();
  out.cancel = await outcome(handle.result());
  out.cancelLatencyMs = Math.round(performance.now() - t0);
} finally {
  await connection.close();
}
console.log(JSON.stringify(out));
