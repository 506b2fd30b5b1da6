package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/toolcore"
	"github.com/toolgate/toolgate/wire"
)

// A hook answers the confirmations a call's tool asks while Execute waits for it; any other
// question is left for another answerer (toolgate answer, an MCP client). It needs a Temporal
// server and a worker, so it is compiled, not run.
func ExampleOptions_onInput() {
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: "127.0.0.1:7233"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	tg := client.New(c, client.Options{
		OnInput: func(ctx context.Context, ev client.InputEvent) (map[string]json.RawMessage, error) {
			answers := map[string]json.RawMessage{}
			for key, q := range ev.Requests { // never a callback's question
				if q.Method != toolcore.MethodElicit {
					continue
				}
				answer, err := json.Marshal(toolcore.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}})
				if err != nil {
					return nil, err
				}
				answers[key] = answer
			}
			return answers, nil
		},
	})
	call, err := toolcore.NewToolCall("deploy-1", "deploy", []byte(`{"service":"billing"}`))
	if err != nil {
		log.Fatal(err)
	}
	result, err := tg.Execute(context.Background(), call)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(result.Content())
}

// An operator's tool reads what a waiting call asks and answers it, naming the round it read;
// a refusal says why.
func ExampleClient_AnswerInput() {
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: "127.0.0.1:7233"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	tg := client.New(c, client.Options{})
	ctx := context.Background()
	st, err := tg.Input(ctx, "deploy-1")
	if err != nil || !st.Waiting {
		log.Fatal("the call does not wait for input: ", err)
	}
	accepted, err := tg.AnswerInput(ctx, "deploy-1", wire.InputAnswer{Round: st.Round, By: "ops",
		Responses: map[string]json.RawMessage{"delete-old": json.RawMessage(`{"action":"decline"}`)}})
	switch {
	case errors.Is(err, client.ErrInputRefused):
		log.Fatal(err) // the call's reason: another round, an unknown key, ...
	case err != nil:
		log.Fatal(err)
	}
	fmt.Println("still unanswered:", accepted.Remaining)
}
