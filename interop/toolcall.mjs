// How a TypeScript agent runs toolgate tool calls with the official Temporal client. This module
// is the recipe the README gives other languages; contract.mjs drives it against a real server.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';

export const WORKFLOW_TYPE = 'ToolCallWorkflow';
// MEMO_PRINCIPAL is the memo key of a call's principal.
export const MEMO_PRINCIPAL = 'toolgate.principal';

// callPrincipal reads whom a call runs for from its memo, or undefined.
export async function callPrincipal(handle) {
  return (await handle.describe()).memo?.[MEMO_PRINCIPAL];
}

// workflowId maps a call ID to its workflow ID: printable ASCII bytes '!'..'~' except '%' stay,
// every other UTF-8 byte (space, '%', non-ASCII) is %XX with upper-case hex.
export function workflowId(callId, scope = '') {
  const escape = (s) => s.replace(/[^\x21-\x24\x26-\x7e]/gu, encodeURIComponent);
  return (scope ? escape(scope) + '/' : '') + 'toolcall-' + escape(callId);
}

// canonical encodes JSON with sorted object keys, so two encodings of one call compare equal.
function canonical(value) {
  if (Array.isArray(value)) return '[' + value.map(canonical).join(',') + ']';
  if (value !== null && typeof value === 'object') {
    return '{' + Object.keys(value).sort().map((k) => JSON.stringify(k) + ':' + canonical(value[k])).join(',') + '}';
  }
  return JSON.stringify(value);
}

export class CallConflictError extends Error {}

// recordedCall reads the call a workflow was started with (the first history event's input).
export async function recordedCall(handle) {
  const history = await handle.fetchHistory();
  const started = history.events[0].workflowExecutionStartedEventAttributes;
  return JSON.parse(Buffer.from(started.input.payloads[0].data).toString('utf8'));
}

// startCall starts a call, or attaches to the execution that already has its workflow ID, running
// or completed, after checking it holds the same call. Reuse policy REJECT_DUPLICATE: a call ID
// names one execution. Conflict policy FAIL: the start then says whether it created the run, and
// only an existing run needs the check; USE_EXISTING would attach to a running one silently, and
// a completed one raises WorkflowExecutionAlreadyStarted under either policy.
//
// principal, when given, is whom the call runs for (docs/principals.md): { issuer, subject,
// tenant, name, groups, actor }, recorded in the start's memo under MEMO_PRINCIPAL. A client can
// only assert it; authenticatedBy is for the frontend's authorizer to vouch for.
export async function startCall(client, call, { taskQueue = 'toolgate', scope = '', principal } = {}) {
  const id = workflowId(call.id, scope);
  try {
    return await client.workflow.start(WORKFLOW_TYPE, {
      args: [call],
      taskQueue,
      workflowId: id,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'FAIL',
      ...(principal ? { memo: { [MEMO_PRINCIPAL]: principal } } : {}),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    const handle = client.workflow.getHandle(id);
    const recorded = await recordedCall(handle);
    if (canonical(recorded) !== canonical({ type: call.type, id: call.id, name: call.name, arguments: call.arguments })) {
      throw new CallConflictError(`tool call ID already used by a different call: ${id}`);
    }
    return handle;
  }
}

// executeCall is startCall, then the call's result message (a tool-result object).
export async function executeCall(client, call, options) {
  const handle = await startCall(client, call, options);
  return handle.result();
}
