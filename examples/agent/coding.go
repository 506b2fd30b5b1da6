package main

import (
	"encoding/json"
	"fmt"
)

// The sandbox tools the coding example calls (docs/sandbox.md): a worker serves them when its
// sandbox is on (`toolgate dev --sandbox`, `toolgate worker --sandbox-dir DIR --sandbox-store
// STORE`).
const (
	codingWriteTool = "workspace_write_file"
	codingExecTool  = "exec"
	codingReadTool  = "workspace_read_file"
)

// CodingPrompt is the coding example's prompt.
const CodingPrompt = "Write a shell script that says hello, run it and tell me what it said."

// CodingScriptSource is the shell script the coding example's model writes: it counts the
// words of its own source and writes the sentence to out.txt.
const CodingScriptSource = "#!/bin/sh\n" +
	"# Says hello from the sandbox and counts its own words.\n" +
	"printf 'hello from %s: %s words\\n' \"$(pwd)\" \"$(wc -w < hello.sh)\" > out.txt\n"

// CodingScript is the coding example's conversation, one call per turn in the workspace of the
// agent run: write hello.sh, run it with sh, read the out.txt it wrote, then answer with what
// the read gave.
var CodingScript = Script{Turns: []Turn{
	{Text: "I'll write a script.", ToolCalls: []json.RawMessage{
		toolCallJSON("call-write", codingWriteTool, map[string]any{"path": "hello.sh", "content": CodingScriptSource}),
	}},
	{Text: "Now I run it.", ToolCalls: []json.RawMessage{
		toolCallJSON("call-exec", codingExecTool, map[string]any{"argv": []string{"sh", "hello.sh"}}),
	}},
	{Text: "And read what it wrote.", ToolCalls: []json.RawMessage{
		toolCallJSON("call-read", codingReadTool, map[string]any{"path": "out.txt"}),
	}},
	{Text: "The script wrote: {{call-read}}"},
}}

// CodingModel plays CodingScript.
func CodingModel() ScriptedModel { return CodingScript.Model() }

// toolCallJSON is the wire JSON of a tool call; it panics on arguments that do not marshal (the
// scripts' are literals).
func toolCallJSON(id, name string, args map[string]any) json.RawMessage {
	data, err := json.Marshal(map[string]any{"type": "toolCall", "id": id, "name": name, "arguments": args})
	if err != nil {
		panic(fmt.Sprintf("tool call %s: %v", id, err))
	}
	return data
}
