package mcp

//lint:file-ignore SA1019 sampling and roots, deprecated at 2026-07-28, are current at 2025-11-25, which this file serves too

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/toolcore"
)

// A mounted MCP server that asks toolgate, as its client, for input during a tools/call
// (MountOptions.AskCaller) is relayed to the mounted tool's own caller: its elicitation/create
// and sampling/createMessage, whether sent on the call's stream (2025-11-25) or returned in an
// InputRequiredResult (2026-07-28, which the SDK client turns into the same requests and a retry),
// become questions of the toolgate call (toolcore.Ask) under a key derived from the request, so
// the attempt ends asking, the call waits durably, and the next attempt calls the remote tool
// again: the server asks the same question and gets the answer that came back. The remote tool
// thus runs again from its start after each answer: its effects before the question are the
// server's to make idempotent (an Unsafe mounted tool is reconciled like any other). roots/list is
// answered by the SDK client from its own (empty) roots and is not relayed.

// remoteAskPrefix starts the keys of the questions a mounted server asks.
const remoteAskPrefix = "mcp."

// remoteAsk is one in-flight tools/call of a mounted tool whose server may ask: the execution
// context a server request is asked in, and the first question left unanswered.
type remoteAsk struct {
	ctx   context.Context
	mu    sync.Mutex
	asked error // wraps toolcore.ErrInputRequired
}

// askers are the in-flight calls of a Remote, for the requests its server sends.
type askers struct {
	mu    sync.Mutex
	calls map[*remoteAsk]struct{}
}

// begin registers a call of ctx; end unregisters it.
func (a *askers) begin(ctx context.Context) *remoteAsk {
	c := &remoteAsk{ctx: ctx}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.calls == nil {
		a.calls = map[*remoteAsk]struct{}{}
	}
	a.calls[c] = struct{}{}
	return c
}

func (a *askers) end(c *remoteAsk) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.calls, c)
}

// errAskerUnknown refuses a server request that names no one call to ask.
var errAskerUnknown = errors.New("toolgate cannot tell which tool call this request belongs to")

// find returns the call a server request in ctx belongs to: the call whose execution ctx is (a
// 2026-07-28 InputRequiredResult, fulfilled within the call), else the only call in flight (a
// 2025-11-25 request on the session); with several in flight, none.
func (a *askers) find(ctx context.Context) (*remoteAsk, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var only *remoteAsk
	for c := range a.calls {
		if c.ctx == ctx || toolcore.IdempotencyKey(ctx) != "" && toolcore.IdempotencyKey(ctx) == toolcore.IdempotencyKey(c.ctx) {
			return c, nil
		}
		only = c
	}
	if len(a.calls) == 1 {
		return only, nil
	}
	return nil, errAskerUnknown
}

// ask asks the call's caller the server's request (method, params) and returns the answer, or
// records the unanswered question and returns its error.
func (a *askers) ask(ctx context.Context, method string, params any, out any) error {
	c, err := a.find(ctx)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(method + "\n" + string(raw)))
	answer, err := toolcore.Ask(c.ctx, remoteAskPrefix+hex.EncodeToString(sum[:20]), toolcore.InputRequest{Method: method, Params: raw})
	if err != nil {
		if toolcore.IsInputRequired(err) {
			c.mu.Lock()
			if c.asked == nil {
				c.asked = err
			}
			c.mu.Unlock()
		}
		return err
	}
	return json.Unmarshal(answer, out)
}

// askedOf returns the question c left unanswered, if any.
func (c *remoteAsk) askedOf() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asked
}

// askHandlers sets the client handlers that relay a mounted server's requests to a.
func askHandlers(opts *sdk.ClientOptions, a *askers) {
	opts.ElicitationHandler = func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		var res sdk.ElicitResult
		if err := a.ask(ctx, toolcore.MethodElicit, req.Params, &res); err != nil {
			return nil, err
		}
		return &res, nil
	}
	opts.CreateMessageHandler = func(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
		var res sdk.CreateMessageResult
		if err := a.ask(ctx, toolcore.MethodSample, req.Params, &res); err != nil {
			return nil, err
		}
		return &res, nil
	}
}
