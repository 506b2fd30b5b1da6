package uitest

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/toolbox"
)

// TestWebUIShowsWaitingCall opens the page of a write_file call that waits for approval, whose
// arguments carry the attack strings of issue 25 (a C1 CSI, a bidi override, NUL, an OSC 8 link),
// in Chromium: the first view says the call awaits approval, with its hash and how to decide, the
// arguments escaped (no raw control or bidi character reaches the page), and the approval
// timer's summary. toolgate approve and status show the same escaped, and the hash is that of the
// exact recorded arguments. The screenshot is ui-waiting-call.png in the artifacts.
func TestWebUIShowsWaitingCall(t *testing.T) {
	if testing.Short() {
		t.Skip("web UI: builds toolgate, starts a Temporal server and a Chromium")
	}
	root := moduleRoot(t)
	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	files := t.TempDir()
	dev := startDev(t, bin, "--root", files)
	env := childEnv("TEMPORAL_ADDRESS="+dev.frontend, "TEMPORAL_NAMESPACE="+dev.namespace)

	content := "\u009b2J\u009b1;1H \x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\ a\x00b"
	argsJSON, err := json.Marshal(map[string]string{"path": "report\u202etxt.sh", "content": content})
	require.NoError(t, err)
	const callID = "ui-waiting"
	wid := "toolcall-" + callID
	runToolgate(t, bin, env, "call", toolbox.NameWriteFile, string(argsJSON), "--id", callID, "--detach")
	waitForApprovals(t, bin, env, 1)
	hash := callHash(t, files, callID, string(argsJSON))

	t.Run("cli", func(t *testing.T) {
		code, shown, stderr := runToolgateCode(t, bin, env, "approve", wid, "--reviewer", "ops")
		assert.Equal(t, 2, code, "not confirmed: %s", stderr)
		for _, want := range []string{`report\u202etxt.sh`, `\u009b2J`, `\u001b]8;;http://evil`, `a\u0000b`, "hash      " + hash, "note      (escaped "} {
			assert.Contains(t, shown, want)
		}
		assertNoRawControls(t, shown+stderr)

		status := runToolgate(t, bin, env, "status", wid)
		for _, want := range []string{"approval  awaiting approval since ", "hash      " + hash, "decide    toolgate approve " + wid, `report\u202etxt.sh`} {
			assert.Contains(t, status, want)
		}
		assertNoRawControls(t, status)
	})

	tab := startBrowser(t)
	artifacts := artifactDir(t, root)
	page := dev.ui + "/namespaces/" + url.PathEscape(dev.namespace) + "/workflows/" + url.PathEscape(wid)

	// The first view: the timeline shows the approval timer labelled with its summary ("approval
	// of write_file expires (call hash ...)", see the screenshot); the label is drawn outside the
	// page's text, so the test reads the text around it: the arguments shown escaped, no raw
	// control or bidi character.
	text, err := waitForPage[string](t, tab, page, pageTextFunc, filepath.Join(artifacts, "ui-waiting-call.png"),
		[]string{"Timeline", `report\u202etxt.sh`}, "")
	require.NoError(t, err)
	assertNoRawControls(t, text)
}

// pageTextFunc returns the page's text (its SVG labels too: the timeline's) once it contains
// every string of wants, and null until then; with tab, it first clicks the tab of that name.
const pageTextFunc = `(wants, tab) => {
	if (tab) {
		for (const el of document.querySelectorAll('[role="tab"], a, button')) {
			if (el.innerText && el.innerText.trim() === tab && el.getAttribute("aria-selected") !== "true") {
				el.click();
				break;
			}
		}
	}
	let text = document.body ? document.body.innerText : "";
	for (const el of document.querySelectorAll("svg text, svg foreignObject, [data-testid*='timeline'] *")) {
		text += "\n" + el.textContent;
	}
	const details = [...document.querySelectorAll("h3, h4, p, span, div")].find((el) => el.innerText && el.innerText.trim() === "Current Details");
	if (details && details.parentElement) {
		text += "\n" + details.parentElement.textContent;
	}
	return wants.every((w) => text.includes(w)) ? text : null;
}`

// assertNoRawControls fails when s holds a C0 control other than newline and tab, DEL, a C1
// control or a bidi control.
func assertNoRawControls(t *testing.T, s string) {
	t.Helper()
	for _, r := range s {
		bad := (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) ||
			(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
		if !assert.False(t, bad, "raw %U in the output", r) {
			return
		}
	}
}
