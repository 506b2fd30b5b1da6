package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/wire"
)

// A call whose tool needs its principal's consent to a provider (toolcore.Options.Credentials)
// waits durably for it (client.Status.Consent, the query wire.QueryConsent). Its MCP client is
// shown the authorization URL, never a token: at 2025-11-25 a client that declared URL-mode
// elicitation gets elicitation/create with mode "url" on the request's stream (tools/call, or
// tasks/result for a task), and notifications/elicitation/complete once the call goes on; a
// 2026-07-28 task of a client that declares it is input_required with the same elicitation
// among its inputRequests. Other clients read the URL in a progress notification (tools/call with
// a progressToken) or the task's statusMessage. Only the request's own client, or the task's
// owner, is shown it: a call runs for the principal whose token started it, and the URL links
// that principal's account.

// ConsentInterval is how often a tools/call (or tasks/result) that can show a consent to its
// client reads its call's wait for consent: one DescribeWorkflowExecution, and a query only while
// the call waits. A call that ends sooner costs nothing.
const ConsentInterval = time.Second

// consentElicitationID is the elicitationId of a call's consent request: the same for every look
// at one request (a client polls tasks/get), another for a new request of the call.
func consentElicitationID(workflowID, url string) string {
	sum := sha256.Sum256([]byte(workflowID + "\n" + url))
	return "toolgate-consent-" + hex.EncodeToString(sum[:16])
}

// consentMessage says what the principal consents to and until when, escaped (a provider's
// configuration and a tool's scopes). withURL appends the URL, for the clients that read it in a
// message instead of an elicitation's url.
func consentMessage(toolName string, st wire.ConsentState, withURL bool) string {
	text := "The call of tool " + toolName + " waits for your consent to " + st.Request.Provider
	if len(st.Request.Scopes) > 0 {
		text += " (scopes " + strings.Join(st.Request.Scopes, " ") + ")"
	}
	if !st.Deadline.IsZero() {
		text += " until " + st.Deadline.UTC().Format(time.RFC3339)
	}
	text += "; it goes on once you have given it"
	if withURL {
		text += ": open " + st.Request.URL
	}
	return safetext.String(text)
}

// consentElicitation is the URL-mode elicitation/create of a call's consent request.
func consentElicitation(workflowID, toolName string, st wire.ConsentState) *sdk.ElicitParams {
	return &sdk.ElicitParams{
		Mode:          "url",
		Message:       consentMessage(toolName, st, false),
		URL:           st.Request.URL,
		ElicitationID: consentElicitationID(workflowID, st.Request.URL),
	}
}

// sessionElicitsURL reports whether the client of a 2025-11-25 session declared URL-mode
// elicitation.
func sessionElicitsURL(ss *sdk.ServerSession) bool {
	if ss == nil {
		return false
	}
	init := ss.InitializeParams()
	return init != nil && init.Capabilities != nil && init.Capabilities.Elicitation != nil && init.Capabilities.Elicitation.URL != nil
}

// metaElicitsURL reports whether a 2026-07-28 request's _meta declares URL-mode elicitation
// among its client capabilities.
func metaElicitsURL(meta map[string]any) bool {
	caps, _ := meta[sdk.MetaKeyClientCapabilities].(map[string]any)
	elicitation, _ := caps["elicitation"].(map[string]any)
	_, ok := elicitation["url"]
	return ok
}

// consentShow shows one call's waits for consent to the client of one request, for as long as
// the request waits for the call's result (client.ConsentWatch).
type consentShow struct {
	watch     *client.ConsentWatch
	ss        *sdk.ServerSession
	urlMode   bool
	related   sdk.Meta // the related-task _meta of a task's elicitation, or nil
	elicits   sync.WaitGroup
	endElicit context.CancelFunc
}

// refuseTimeout bounds the signal of a declined consent.
const refuseTimeout = 10 * time.Second

// showConsent starts showing the waits for consent of workflowID's call to the client of ss:
// URL-mode elicitations when it declared them (urlMode), else a progress notification for
// token; nil when it can be shown neither (Finish does nothing).
func showConsent(ctx context.Context, tg *client.Client, ss *sdk.ServerSession, urlMode bool, token any, related sdk.Meta, workflowID, toolName string) *consentShow {
	if ss == nil || (!urlMode && token == nil) {
		return nil
	}
	elicitCtx, endElicit := context.WithCancel(ctx)
	s := &consentShow{ss: ss, urlMode: urlMode, related: related, endElicit: endElicit}
	s.watch = tg.WatchConsent(ctx, workflowID, ConsentInterval, func(ctx context.Context, st wire.ConsentState) error {
		switch {
		case !urlMode && st.Waiting:
			return ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Message: consentMessage(toolName, st, true)})
		case !urlMode:
			return nil
		case st.Waiting:
			params := consentElicitation(workflowID, toolName, st)
			params.Meta = related
			s.elicits.Add(1)
			go func() {
				defer s.elicits.Done()
				// Accept only says the user will open the URL: the call goes on once the consent
				// arrives, and ends at its ConsentTimeout without. Decline is the principal's
				// refusal: the call ends now, without running (cancel, a dismissal, changes
				// nothing).
				res, err := ss.Elicit(elicitCtx, params)
				if err == nil && res != nil && res.Action == "decline" {
					rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refuseTimeout)
					defer cancel()
					_ = tg.RefuseConsentByWorkflowID(rctx, workflowID, st.Request.Provider, "declined")
				}
			}()
			return nil
		default:
			return s.complete(ctx, workflowID, st)
		}
	})
	return s
}

// complete tells the client that the consent it was asked for has arrived (or the call ended).
func (s *consentShow) complete(ctx context.Context, workflowID string, st wire.ConsentState) error {
	return s.ss.NotifyElicitationComplete(ctx, &sdk.ElicitationCompleteParams{
		Meta:          s.related,
		ElicitationID: consentElicitationID(workflowID, st.Request.URL),
	})
}

// Finish stops showing, before the caller sends the result: a wait the client was asked about
// and whose end no read saw is completed now; elicitations still unanswered are withdrawn. A nil
// show does nothing.
func (s *consentShow) Finish(ctx context.Context, workflowID string) {
	if s == nil {
		return
	}
	if open := s.watch.Stop(); open != nil && s.urlMode {
		_ = s.complete(ctx, workflowID, *open)
	}
	s.endElicit()
	s.elicits.Wait()
}

// addConsent marks a running 2026-07-28 task whose call waits for its principal's consent:
// input_required with the URL-mode elicitation among its inputRequests when the request declares
// URL elicitation, else working with the URL in its statusMessage.
func (t *tasks) addConsent(st client.Status, meta map[string]any, m map[string]any) {
	c := st.Consent
	if c == nil || !c.Waiting || c.Request.URL == "" {
		return
	}
	if !c.Since.IsZero() {
		m["lastUpdatedAt"] = c.Since.UTC().Format(time.RFC3339Nano)
	}
	if !metaElicitsURL(meta) {
		m["statusMessage"] = consentMessage(st.ToolName, *c, true)
		return
	}
	e := consentElicitation(st.WorkflowID, st.ToolName, *c)
	m["status"] = wire.MCPTaskInputRequired
	m["statusMessage"] = consentMessage(st.ToolName, *c, false)
	m["inputRequests"] = map[string]any{
		wire.MCPConsentInputPrefix + e.ElicitationID: map[string]any{
			"method": "elicitation/create",
			"params": map[string]any{
				"mode":          e.Mode,
				"message":       e.Message,
				"url":           e.URL,
				"elicitationId": e.ElicitationID,
			},
		},
	}
}

// consentTask marks a running 2025-11-25 task whose call waits for its principal's consent:
// input_required when the client of ss declared URL elicitation (tasks/result asks with it), else
// working with the URL in its statusMessage.
func consentTask(ss *sdk.ServerSession, st client.Status, task *Task) {
	c := st.Consent
	if c == nil || !c.Waiting || c.Request.URL == "" {
		return
	}
	if !c.Since.IsZero() {
		task.LastUpdatedAt = c.Since.UTC().Format(time.RFC3339Nano)
	}
	if !sessionElicitsURL(ss) {
		task.StatusMessage = consentMessage(st.ToolName, *c, true)
		return
	}
	task.Status = wire.MCPTaskInputRequired
	task.StatusMessage = consentMessage(st.ToolName, *c, false) + ": tasks/result asks for it"
}
