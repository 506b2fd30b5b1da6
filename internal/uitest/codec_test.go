package uitest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testbin"
)

// TestWebUIDecodesEncryptedCall runs `toolgate dev --codec-key --codec-token-file`: the call's
// payloads are stored encrypted, and the codec server dev starts for the Web UI requires its
// token. The UI cannot send a static token, so the browser logs in once on the codec server's
// /login page (the token in a POST body) and gets an HttpOnly, SameSite=Strict session cookie; the
// UI, whose codec settings include credentials, then shows the decoded input and result in
// Chromium (a cross-origin call the codec server grants by CORS with credentials, after a
// preflight for Content-Type and X-Namespace). Before the login the same request from the UI's
// page is refused with 401.
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
	const token = "ui-codec-token-3f9a"
	tokenFile := filepath.Join(t.TempDir(), "codec-token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(token+"\n"), 0o600))

	dev := startDev(t, bin, "--codec-key", keyFile, "--codec-token-file", tokenFile)
	require.NotEmpty(t, dev.codec, "dev printed no codec-server line")
	env := childEnv("TEMPORAL_ADDRESS="+dev.frontend, "TEMPORAL_NAMESPACE="+dev.namespace, "TOOLGATE_CODEC_KEY="+keyFile)
	const callID = "uitest-encrypted"
	wid := "toolcall-" + callID
	printed := runToolgate(t, bin, env, "call", "echo", `{"text":"`+canary+`"}`, "--id", callID, "--progress", "off")
	require.Contains(t, printed, canary)

	tab := startBrowser(t)
	page := dev.ui + "/namespaces/" + url.PathEscape(dev.namespace) + "/workflows/" + url.PathEscape(wid)
	// decodeStatus is the status of a decode request the UI's page makes as the UI does.
	decodeStatus := func() int {
		t.Helper()
		ctx, cancel := context.WithTimeout(tab, pageTimeout)
		defer cancel()
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(dev.ui)))
		status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch(`+jsString(dev.codec+"/decode")+`, {method: "POST", credentials: "include",
			headers: {"Content-Type": "application/json", "X-Namespace": `+jsString(dev.namespace)+`}, body: '{"payloads":[]}'}).then(r => r.status)`,
			chromedp.EvalAwaitPromise))
		require.NoError(t, err)
		return status
	}
	require.Equal(t, http.StatusUnauthorized, decodeStatus(), "without a session the codec server refuses the UI's decode")

	ctx, cancel := context.WithTimeout(tab, pageTimeout)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(dev.codec+"/login"),
		chromedp.SetValue(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("loggedin"))), "the login page did not confirm the session")
	require.Equal(t, http.StatusOK, decodeStatus(), "with the session cookie the UI's decode passes")

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

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
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
