package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/safetext"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// answerQueryTimeout bounds answer's query of the call's questions: it waits for a worker.
const answerQueryTimeout = 30 * time.Second

type answerOptions struct {
	conn   connOptions
	target targetOptions
	fields []string
	by     string
}

func newAnswerCommand(a *app) *cobra.Command {
	var o answerOptions
	cmd := &cobra.Command{
		Use:   "answer [WORKFLOW_ID] KEY=ANSWER...",
		Short: "Answer the questions a call's tool asks while it waits for input",
		Long: `Show the questions a running call's tool asks (docs/talkback.md) and answer them. The call
waits durably, holding no worker, until every question of its round is answered; its tool then
runs again with the answers. Each question has a KEY; its ANSWER is one of:

  accept, decline, cancel   an elicitation's action; accept takes the form's fields from
                            --field NAME=VALUE, typed by the question's schema (y/n for a
                            boolean, a number, a choice's number or value, a string)
  '<JSON object>'           the whole result of the MCP request asked: an ElicitResult
                            {"action":"accept","content":{...}}, a CreateMessageResult, a
                            ListRootsResult {"roots":[{"uri":"file:///..."}]}

Without answers, it shows the questions and exits 2. A callback's question is answered only by
a request to its URL. The answer names the round shown, so it never reaches a later question;
the call refuses an answer to another round, an unknown or answered key, or one too large, and
the refusal says why. Who answered is --by (default $USER, else $LOGNAME, the bearer token's
subject or the OS account, as approve's reviewer), in the call's history. The questions
and the answers go through the call's workflow, so a worker must poll its task queue (the
questions are waited for at most 30 s).

Exit codes: 0 answered, 2 no such call / not waiting / refused / no or malformed answer, 5 failure.`,
		Example: `  toolgate status toolcall-deploy-1
  toolgate answer toolcall-deploy-1 proceed=accept --field confirm=true
  toolgate answer toolcall-deploy-1 proceed=decline
  toolgate answer --call-id deploy-1 summary='{"role":"assistant","content":{"type":"text","text":"fine"}}'`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAnswer(cmd.Context(), a, o, args)
		},
	}
	addConnFlags(cmd, &o.conn)
	addTargetFlags(cmd, &o.target)
	fs := cmd.Flags()
	fs.StringArrayVar(&o.fields, "field", nil, "NAME=VALUE: a field of the form of the one KEY=accept (repeatable)")
	fs.StringVar(&o.by, "by", "", "who answers, for the call's history (default $USER, else $LOGNAME, the bearer token's subject or the OS account)")
	return cmd
}

func runAnswer(ctx context.Context, a *app, o answerOptions, args []string) error {
	var target []string
	if o.target.callID == "" && len(args) > 0 {
		target, args = args[:1], args[1:]
	}
	wid, err := o.target.workflowID(target)
	if err != nil {
		return err
	}
	if strings.Contains(wid, "=") && o.target.callID == "" {
		return badInput(fmt.Errorf("give the workflow ID before the answers (%s looks like an answer)", safetext.String(wid)))
	}
	by, _ := reviewerIdentity(o.by, o.conn.apiKey, a.lookupEnv, user.Current) // none known: answered by nobody named
	c, err := o.conn.dial(ctx, a.logger)
	if err != nil {
		return err
	}
	defer c.Close()
	cl := o.conn.toolgate(c, "", o.target.scope)
	ids := callIDs{WorkflowID: wid}
	qctx, cancel := context.WithTimeout(ctx, answerQueryTimeout)
	st, err := cl.InputByWorkflowID(qctx, wid)
	cancel()
	if err != nil && ctx.Err() == nil && qctx.Err() != nil {
		err = fmt.Errorf("no worker answered the query of %s within %s: the questions are read from the call's workflow, so a worker must poll its task queue", wid, answerQueryTimeout)
	}
	if err != nil {
		return aboutCall(ids, notFoundHint(err, wid))
	}
	if !st.Waiting {
		return aboutCall(ids, badInput(fmt.Errorf("%s: %w", wid, tgclient.ErrNotAwaitingInput)))
	}
	if err := writeLines(a.out, inputLines(wid, st)); err != nil {
		return err
	}
	if len(args) == 0 {
		return aboutCall(ids, badInput(errors.New("give an answer for each question, KEY=ANSWER")))
	}
	responses, err := buildAnswers(st, args, o.fields)
	if err != nil {
		return aboutCall(ids, badInput(err))
	}
	acc, err := cl.AnswerInputByWorkflowID(ctx, wid, wire.InputAnswer{Round: st.Round, Responses: responses, By: by})
	if err != nil {
		if errors.Is(err, tgclient.ErrNotAwaitingInput) || errors.Is(err, tgclient.ErrInputRefused) {
			err = badInput(err)
		}
		return aboutCall(ids, err)
	}
	keys := keysOf(responses)
	a.logger.Info("input answered", append(ids.fields(), zap.Int("round", acc.Round), zap.Strings("keys", keys), zap.String("by", by))...)
	next := "the tool runs again with the answers"
	if len(acc.Remaining) > 0 {
		next = "the call still waits for " + strings.Join(acc.Remaining, ", ")
	}
	answered := strings.Join(keys, ", ") + fmt.Sprintf(" (round %d)", acc.Round)
	if by != "" {
		answered += " by " + safetext.String(by)
	}
	return writeLines(a.out, [][2]string{{"answered", answered + "; " + next}})
}

// buildAnswers turns KEY=ANSWER arguments and --field values into the responses of round st.
func buildAnswers(st wire.InputState, args, fields []string) (map[string]json.RawMessage, error) {
	responses := map[string]json.RawMessage{}
	accepted := ""
	for _, arg := range args {
		key, answer, ok := strings.Cut(arg, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("%s: an answer is KEY=ANSWER", safetext.String(arg))
		}
		q, asked := st.Requests[key]
		switch {
		case !asked:
			return nil, fmt.Errorf("round %d asks no question %s (it asks %s)", st.Round, safetext.String(key), strings.Join(keysOf(st.Requests), ", "))
		case q.Method == toolcore.MethodCallback:
			return nil, fmt.Errorf("%s waits for a callback: only a request to its URL answers it", key)
		case responses[key] != nil:
			return nil, fmt.Errorf("%s is answered twice", key)
		}
		switch answer {
		case "accept", "decline", "cancel":
			if q.Method != toolcore.MethodElicit {
				return nil, fmt.Errorf("%s is a %s request: its answer is the JSON result", key, q.Method)
			}
			if answer == "accept" {
				if accepted != "" {
					return nil, fmt.Errorf("%s and %s are both accepted: answer one with --field, the other with its JSON", accepted, key)
				}
				accepted = key
				continue // built with the fields below
			}
			responses[key] = mustJSON(toolcore.ElicitResult{Action: answer})
		default:
			raw := json.RawMessage(answer)
			if !json.Valid(raw) || !strings.HasPrefix(strings.TrimSpace(answer), "{") {
				return nil, fmt.Errorf("%s: the answer is accept, decline, cancel or a JSON object", key)
			}
			responses[key] = raw
		}
	}
	if accepted == "" {
		if len(fields) > 0 {
			return nil, errors.New("--field goes with one KEY=accept")
		}
		return responses, nil
	}
	content, err := formContent(st.Requests[accepted], fields)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", accepted, err)
	}
	responses[accepted] = mustJSON(toolcore.ElicitResult{Action: "accept", Content: content})
	return responses, nil
}

// formContent types --field values by the elicitation's requested schema and checks that every
// required field has one.
func formContent(q toolcore.InputRequest, fields []string) (map[string]any, error) {
	var el toolcore.Elicitation
	if err := json.Unmarshal(q.Params, &el); err != nil {
		return nil, fmt.Errorf("malformed elicitation: %w", err)
	}
	form, err := parseForm(el.RequestedSchema)
	if err != nil {
		return nil, err
	}
	content := map[string]any{}
	for _, fv := range fields {
		name, text, ok := strings.Cut(fv, "=")
		if !ok {
			return nil, fmt.Errorf("--field %s: give NAME=VALUE", safetext.String(fv))
		}
		f, ok := form.field(name)
		if !ok {
			return nil, fmt.Errorf("--field %s: the form has no such field", safetext.String(name))
		}
		v, err := f.parse(text)
		if err != nil {
			return nil, fmt.Errorf("--field %s: %w", name, err)
		}
		content[name] = v
	}
	for _, f := range form.Fields {
		if _, set := content[f.Name]; !set && f.Required {
			return nil, fmt.Errorf("the form requires %s (%s): give --field %s=VALUE", f.Name, f.kind(), f.Name)
		}
	}
	if len(content) == 0 {
		return nil, nil
	}
	return content, nil
}
