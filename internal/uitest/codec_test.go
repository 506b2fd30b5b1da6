package uitest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testbin"
)

// TestWebUIDecodesEncryptedCall runs `toolgate dev --codec-key`: the call's payloads are stored
// encrypted, and the embedded Web UI, in Chromium, shows the decoded input and result through
// the codec server dev starts for it (a cross-origin call the codec server grants by CORS, after
// a preflight for Content-Type and X-Namespace).
//
// The UI first renders the panels from the history as stored (the Result panel briefly shows
// the encrypted {"payloads":[...]}) and replaces them once the codec server answers, so the test
// waits for the decoded call and result, not for any JSON.
func TestWebUIDecodesEncryptedCall(t *testing.T) {
	if testing.Short() {
		t.Skip("web UI: builds toolgate, starts a Temporal server and a Chromium")
	}
	const canary = "ui-canary-77c2"
	root := moduleRoot(t)
	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	keyFile := filepath.Join(t.TempDir(), "keys.txt")
	secret := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, 32))
	require.NoError(t, os.WriteFile(keyFile, []byte("ui-key "+secret+"\n"), 0o600))

	dev := startDev(t, bin, "--codec-key", keyFile)
	env := childEnv("TEMPORAL_ADDRESS="+dev.frontend, "TEMPORAL_NAMESPACE="+dev.namespace, "TOOLGATE_CODEC_KEY="+keyFile)
	const callID = "uitest-encrypted"
	wid := "toolcall-" + callID
	printed := runToolgate(t, bin, env, "call", "echo", `{"text":"`+canary+`"}`, "--id", callID, "--progress", "off")
	require.Contains(t, printed, canary)

	tab := startBrowser(t)
	page := dev.ui + "/namespaces/" + url.PathEscape(dev.namespace) + "/workflows/" + url.PathEscape(wid)
	shown, err := waitForPage[workflowPage](t, tab, page, decodedPageFunc, filepath.Join(artifactDir(t, root), "ui-encrypted-workflow.png"), wid, callID)
	require.NoError(t, err)
	assert.JSONEq(t, printed, shown.Result, "the Result panel shows the decoded result")
	var input struct {
		ID        string          `json:"id"`
		Arguments json.RawMessage `json:"arguments"`
	}
	require.NoError(t, json.Unmarshal([]byte(shown.Input), &input), "Input panel %q", shown.Input)
	assert.Equal(t, callID, input.ID)
	assert.JSONEq(t, `{"text":"`+canary+`"}`, string(input.Arguments), "the Input panel shows the decoded arguments")
}

// decodedPageFunc returns the page's workflowPage once the heading names the workflow and the
// Input and Result panels hold the decoded call and its result (their IDs are callId), and null
// until then.
const decodedPageFunc = `(wid, callId) => {
	const text = (sel) => { const el = document.querySelector(sel); return el ? el.innerText.trim() : ""; };
	const parse = (s) => { try { return JSON.parse(s); } catch (e) { return null; } };
	const page = {
		workflowId: text('[data-testid="workflow-id-heading"]'),
		status: text('[data-testid="execution-status"]'),
		input: text('[data-testid="input-and-result"] [role="textbox"][aria-label="Input"]'),
		result: text('[data-testid="input-and-result"] [role="textbox"][aria-label="Result"]'),
	};
	const input = parse(page.input), result = parse(page.result);
	if (page.workflowId !== wid || !input || input.id !== callId || !result || result.toolCallId !== callId) {
		return null;
	}
	return page;
}`
