package mcp_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sdkclient "go.temporal.io/sdk/client"

	"github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/mcp"
	"github.com/toolgate/toolgate/toolcore"
)

type noteArgs struct {
	ID int `json:"id" jsonschema:"the note's number"`
}

type note struct {
	Text string `json:"text"`
}

// notesServer is someone else's MCP server, with one read-only tool.
func notesServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{
		Name:        "notes.read",
		Description: "Read a note.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, _ *sdk.CallToolRequest, in noteArgs) (*sdk.CallToolResult, note, error) {
		return nil, note{Text: fmt.Sprintf("note %d", in.ID)}, nil
	})
	return s
}

// Mounting an MCP server makes each of its tools a toolgate tool: the remote input schema is
// checked before the remote server sees a call, and the annotations give the side-effect class.
// Register the tools with a worker (worker.New(c, namespace, registry, ...)) to run them
// durably; here they run in process. The server is in memory here; mcp.Target names a command or
// an http(s) URL.
func ExampleMount() {
	ctx := context.Background()
	remote := notesServer()
	transport := func() sdk.Transport {
		serverSide, clientSide := sdk.NewInMemoryTransports()
		if _, err := remote.Connect(ctx, serverSide, nil); err != nil {
			log.Fatal(err)
		}
		return clientSide
	}
	mounted, err := mcp.Mount(ctx, "notes", transport, mcp.MountOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer mounted.Close()
	registry, err := toolcore.NewRegistry(mounted.Tools()...)
	if err != nil {
		log.Fatal(err)
	}
	for _, info := range registry.Infos() {
		fmt.Println(info.Name, info.SideEffect)
	}

	for i, args := range []string{`{"id":7}`, `{"id":"seven"}`} {
		call, err := toolcore.NewToolCall(fmt.Sprintf("call-%d", i+1), "notes_notes_read", []byte(args))
		if err != nil {
			log.Fatal(err)
		}
		result, err := toolcore.Execute(ctx, registry, call)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(result.Content())
	}
	// Output:
	// notes_notes_read readOnly
	// {"text":"note 7"}
	// {"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"\"id\": expected integer, got string"}}
}

// Serving a task queue's tools to MCP clients over streamable HTTP, on loopback: each tools/call
// runs durably through the toolgate client. It needs a Temporal server and a worker, so it is
// compiled, not run.
func ExampleNewServer() {
	ctx := context.Background()
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: "127.0.0.1:7233"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	tg := client.New(c, client.Options{TaskQueue: "weather-agents"})
	tools, err := tg.ListTools(ctx) // the tools the queue's worker serves
	if err != nil {
		log.Fatal(err)
	}
	server := mcp.NewServer(tg, tools, mcp.Options{Name: "weather", Version: "1.0.0"})
	handler := mcp.HTTPHandler(server, mcp.HTTPOptions{}) // loopback only, no authentication
	log.Fatal(http.ListenAndServe("127.0.0.1:8931", handler))
}
