// Package policy decides, with a Cedar policy set (github.com/cedar-policy/cedar-go), whether a
// validated tool call may run, must wait for a human, or is denied. It is pure: a decision
// depends only on the set and the request (the call's principal, its tool and its validated
// arguments), never on the clock or I/O, so workflow code can evaluate it and a replay or
// `toolgate policy test` gets the same answer. docs/policy.md is the guide; docs/contract.md
// ("Policy") states the rules.
//
// # The set
//
// A Set is one Cedar file (Parse, Load). It is identified by Hash: "sha256:" + the hex SHA-256
// of the file's bytes (what `sha256sum FILE` prints), so an operator can tell which file decided
// a recorded call. Each policy has an ID: its @id("...") annotation, else "policy<n>" by
// position (0-based, as Cedar names them). Annotations toolgate reads:
//
//   - @id("guests-no-write"): the policy's ID (unique in the set, at most MaxIDBytes).
//   - @reason("guests may not write files"): the text a POLICY_DENIED result shows the model
//     (at most MaxReasonBytes, no control characters). Give one to every forbid.
//   - @effect("approve"), on a forbid only: where the forbid matches, the call waits for a
//     human decision instead of being denied.
//
// # Entities
//
//	principal  Toolgate::User::"<Principal.Key()>" (the anonymous principal, for a call with
//	           none: Toolgate::User::"" with anonymous == true)
//	           attributes: issuer, subject, tenant, name, authenticatedBy (Strings, "" when
//	           unset), anonymous, authenticated (Booleans), actor (a record {issuer, subject,
//	           name}, present only when an agent or service acts for the principal)
//	           parents: Toolgate::Group::"<g>" for each of its groups
//	action     Toolgate::Action::"call" (one action: the tool is the resource)
//	resource   Toolgate::Tool::"<tool name>"
//	           attributes: sideEffect ("readOnly" | "idempotent" | "unsafe"), requireApproval,
//	           sideEffectAssumed (Booleans), annotations (the MCP hints {readOnlyHint,
//	           destructiveHint, idempotentHint})
//	context    arguments: the validated arguments as a record (see below)
//	           calls: {total, tool} (Longs): the run's calls so far, this one included, only
//	           when the caller counts them (an agent run's inline calls under a budget)
//
// Arguments become Cedar values as JSON does: objects are records (a null member is left out,
// so `has` is false), arrays are sets (unordered, without duplicates), strings, booleans, and
// numbers: an integer in the int64 range is a Long, any other number with at most four decimals
// in decimal's range is a decimal (compare with .lessThan and friends); a number with no Cedar
// value, a null in an array, or nesting deeper than MaxDepth denies the call (fail closed).
//
// # Decisions
//
// Evaluate applies Cedar's rules to the set without its @effect("approve") policies: a
// matching forbid denies (the first in file order names the decision), no matching permit denies
// (Cedar's default: a set needs permits), otherwise the approve policies are evaluated and the
// first that matches makes the decision approve; else allow. A permit whose evaluation errors (a
// missing attribute: guard with `has`; a decimal compared with <) does not match, as in Cedar;
// a forbid whose evaluation errors denies, and an approve one asks a human (fail closed, where
// Cedar would skip them).
//
// Visible decides what `tools/list` shows: a tool is hidden only when the set denies every call
// of it by this principal whatever the context (a forbid that matches with no condition left on
// context, or no permit that could match).
//
// # Reload
//
// A Source holds the current set of a worker; Watch polls its file and swaps in a changed
// valid set (an invalid one is logged and the old set kept). The workflow records each call's
// decision with the set's hash, so replay never re-evaluates.
package policy
