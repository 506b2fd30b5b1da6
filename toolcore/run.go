package toolcore

import "context"

// CallRun returns the name of the agent run the running call belongs to, or "" outside an
// execution or when the executor gave none. On the durable path it is the agent workflow's ID
// for the agent's inline and child calls, the scope of a call made through a scoped client, and
// otherwise the call's own workflow ID: calls with the same run share what a tool keeps per run
// (a sandbox workspace). It is an opaque key, not a secret and not proof of anything.
func CallRun(ctx context.Context) string {
	if e := executionFrom(ctx); e != nil {
		return e.Run
	}
	return ""
}
