// Package consenttest is a stand-in ToolCallWorkflow that waits for its principal's consent as
// the real one shows it on the wire: ToolOutcome wire.OutcomeAwaitingConsent, the query
// wire.QueryConsent, the current details naming the authorization URL, woken by the signal
// wire.SignalConsent. Tests of what surfaces such a wait (client.Status and Options.OnConsent,
// toolgate status and call, toolgate mcp) run it on a task queue of their own, so they need no
// OAuth server and no credential source. Tests only.
package consenttest
