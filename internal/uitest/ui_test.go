package uitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/internal/testbin"
	"github.com/toolgate/toolgate/internal/uitest/browser"
)

// Ceilings against hangs, never waits for progress: the machine may be busy linking the server.
const (
	readyTimeout = 2 * time.Minute
	runTimeout   = 2 * time.Minute // one toolgate call or status
	pageTimeout  = 2 * time.Minute // until a page shows what the test waits for
	stopTimeout  = time.Minute
)

// The browser window, and so every screenshot, is this size.
const windowWidth, windowHeight = 1400, 1000

func TestWebUIShowsCompletedCall(t *testing.T) {
	if testing.Short() {
		t.Skip("web UI: builds toolgate, starts a Temporal server and a Chromium")
	}
	root := moduleRoot(t)
	bin, err := testbin.Toolgate()
	require.NoError(t, err)
	dev := startDev(t, bin)
	env := childEnv("TEMPORAL_ADDRESS="+dev.frontend, "TEMPORAL_NAMESPACE="+dev.namespace)

	const callID = "uitest-add"
	wid := "toolcall-" + callID
	printed := runToolgate(t, bin, env, "call", "add", `{"left":20,"right":22}`, "--id", callID, "--progress", "off",
		"--as", "uitest-alice", "--as-group", "guests")
	var result struct {
		ToolCallID string `json:"toolCallId"`
		Content    string `json:"content"`
		IsError    bool   `json:"isError"`
	}
	require.NoError(t, json.Unmarshal([]byte(printed), &result), "toolgate call printed %q", printed)
	require.Equal(t, callID, result.ToolCallID)
	require.JSONEq(t, `{"sum":42}`, result.Content)
	require.False(t, result.IsError)

	var status struct {
		RunID string `json:"runId"`
		State string `json:"state"`
	}
	statusOut := runToolgate(t, bin, env, "status", wid, "--json")
	require.NoError(t, json.Unmarshal([]byte(statusOut), &status), "toolgate status printed %q", statusOut)
	require.Equal(t, "completed", status.State)
	require.NotEmpty(t, status.RunID)

	tab := startBrowser(t)
	artifacts := artifactDir(t, root)
	workflows := dev.ui + "/namespaces/" + url.PathEscape(dev.namespace) + "/workflows"
	runPath := "/namespaces/" + url.PathEscape(dev.namespace) + "/workflows/" + url.PathEscape(wid) + "/" + url.PathEscape(status.RunID)

	t.Run("workflow list", func(t *testing.T) {
		row, err := waitForPage[listRow](t, tab, workflows, listRowFunc, filepath.Join(artifacts, "ui-workflows.png"), wid)
		require.NoError(t, err)
		assert.Contains(t, row.Text, status.RunID)
		assert.Contains(t, row.Text, "ToolCallWorkflow")
		assert.Contains(t, strings.ToLower(row.Text), "completed")
		assert.True(t, strings.HasPrefix(row.Href, runPath), "link %q does not lead to run %q", row.Href, runPath)
	})

	pages := []struct {
		name string
		url  string
		shot string
	}{
		{name: "workflow page by ID", url: workflows + "/" + url.PathEscape(wid), shot: "ui-workflow.png"},
		{name: "run history page", url: dev.ui + runPath + "/history", shot: "ui-workflow-history.png"},
	}
	t.Run("principal in the memo", func(t *testing.T) {
		// The workflow page's memo shows whom the call ran for (docs/principals.md).
		shown, err := waitForPage[string](t, tab, workflows+"/"+url.PathEscape(wid), memoFunc, filepath.Join(artifacts, "ui-principal.png"), "uitest-alice")
		require.NoError(t, err)
		assert.Contains(t, shown, "toolgate.principal")
		assert.Contains(t, shown, "guests")
	})
	for _, tt := range pages {
		t.Run(tt.name, func(t *testing.T) {
			shown, err := waitForPage[workflowPage](t, tab, tt.url, workflowPageFunc, filepath.Join(artifacts, tt.shot), wid)
			require.NoError(t, err)
			assert.Equal(t, wid, shown.WorkflowID)
			assert.Equal(t, "completed", strings.ToLower(shown.Status))
			assert.JSONEq(t, printed, shown.Result, "the Result panel differs from what toolgate call printed")
			var input struct {
				ID        string          `json:"id"`
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			require.NoError(t, json.Unmarshal([]byte(shown.Input), &input), "Input panel %q", shown.Input)
			assert.Equal(t, callID, input.ID)
			assert.Equal(t, "add", input.Name)
			assert.JSONEq(t, `{"left":20,"right":22}`, string(input.Arguments))
		})
	}
}

// workflowPage is what a workflow page shows, read by workflowPageFunc.
type workflowPage struct {
	WorkflowID string `json:"workflowId"`
	Status     string `json:"status"`
	Input      string `json:"input"`
	Result     string `json:"result"`
}

// workflowPageFunc returns the page's workflowPage once the heading names the workflow and both
// the Input and the Result panel hold a JSON object, and null until then. The selectors are those of
// ui-server v2.55.0's workflow header and input-and-result panel (CodeMirror editors).
const workflowPageFunc = `(wid) => {
	const text = (sel) => { const el = document.querySelector(sel); return el ? el.innerText.trim() : ""; };
	// The panels say null until the history has loaded.
	const isObject = (s) => { try { const v = JSON.parse(s); return v !== null && typeof v === "object"; } catch (e) { return false; } };
	const page = {
		workflowId: text('[data-testid="workflow-id-heading"]'),
		status: text('[data-testid="execution-status"]'),
		input: text('[data-testid="input-and-result"] [role="textbox"][aria-label="Input"]'),
		result: text('[data-testid="input-and-result"] [role="textbox"][aria-label="Result"]'),
	};
	if (page.workflowId !== wid || page.status === "" || !isObject(page.input) || !isObject(page.result)) {
		return null;
	}
	return page;
}`

// memoFunc opens the workflow page's Memo panel (collapsed) and returns the page's text once the
// panel shows the principal memo with the subject, null until then.
const memoFunc = `(subject) => {
	const text = document.body ? document.body.innerText : "";
	if (text.includes("toolgate.principal") && text.includes('"' + subject + '"')) {
		return text;
	}
	const toggle = [...document.querySelectorAll('button, summary, [role="button"], [role="tab"]')]
		.find((el) => el.innerText.trim() === "Memo");
	if (toggle && !toggle.dataset.toolgateOpened) {
		toggle.dataset.toolgateOpened = "1";
		toggle.click();
	}
	return null;
}`

// listRow is the workflow list's row of one workflow, read by listRowFunc.
type listRow struct {
	Text string `json:"text"`
	Href string `json:"href"`
}

// listRowFunc returns the row whose link text is the workflow ID, and null until there is one.
const listRowFunc = `(wid) => {
	for (const row of document.querySelectorAll('[data-testid="workflows-summary-configurable-table-row"]')) {
		for (const a of row.querySelectorAll("a[href]")) {
			if (a.innerText.trim() === wid) {
				return { text: row.innerText, href: a.getAttribute("href") };
			}
		}
	}
	return null;
}`

// waitForPage loads pageURL in the tab and waits until the JavaScript function fn, called with
// args, returns a truthy value, which it decodes into T. Either way it saves a screenshot to shot;
// on failure the error carries the page's text.
func waitForPage[T any](t *testing.T, tab context.Context, pageURL, fn, shot string, args ...any) (T, error) {
	t.Helper()
	// The browser-side poll gives up first, so the tab still answers for the screenshot.
	ctx, cancel := context.WithTimeout(tab, pageTimeout+time.Minute)
	defer cancel()
	var zero T
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
		return zero, fmt.Errorf("load %s: %w", pageURL, err)
	}
	got, waitErr := chromedp.Run(ctx, chromedp.PollFunction[T](fn,
		chromedp.WithPollingInterval(100*time.Millisecond),
		chromedp.WithPollingTimeout(pageTimeout),
		chromedp.WithPollingArgs(args...)))

	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err == nil {
		err = os.WriteFile(shot, png, 0o644)
	}
	if err != nil {
		t.Errorf("save screenshot of %s: %v", pageURL, err)
	} else {
		t.Logf("screenshot of %s: %s", pageURL, shot)
	}

	if waitErr != nil {
		text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		if err != nil {
			text = "(page text unavailable: " + err.Error() + ")"
		}
		return zero, fmt.Errorf("wait for %s to show the call: %w\npage text:\n%s", pageURL, waitErr, tail(text, 4000))
	}
	return got, nil
}

// startBrowser starts one headless Chromium for the test, with the flags of internal/uitest/browser,
// and returns the context of its one tab. Cleanup closes it.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	path, err := browser.Find()
	require.NoError(t, err)

	logs := &syncBuffer{}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.CombinedOutput(logs)}
	size := fmt.Sprintf("--window-size=%d,%d", windowWidth, windowHeight)
	for _, arg := range browser.Args(t.TempDir(), "--hide-scrollbars", size) {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if hasValue {
			opts = append(opts, chromedp.Flag(name, value))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	// Not t.Context: the browser lives until the cleanups below, after the test's context ends.
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithErrorf(func(format string, args ...any) {
		fmt.Fprintf(logs, "chromedp: "+format+"\n", args...)
	}))
	t.Cleanup(func() {
		// Close gracefully, so that no child process still writes to the profile directory.
		closed := make(chan error, 1)
		go func() { closed <- chromedp.Cancel(tab) }()
		select {
		case err := <-closed:
			if err != nil {
				t.Logf("close chromium: %v", err)
			}
		case <-time.After(stopTimeout):
			t.Logf("chromium did not close within %s: killing it", stopTimeout)
		}
		cancelTab()
		cancelAlloc() // waits for the process to exit, before TempDir removes its profile
		if t.Failed() {
			t.Logf("chromium output (D-Bus lines left out):\n%s", tail(withoutDBus(logs.String()), 8000))
		}
	})
	// The first action starts the browser; it must not run under a timeout, which would end it.
	require.NoError(t, chromedp.Do(tab), "start chromium: %s", tail(logs.String(), 4000))
	return tab
}

// dev is a running `toolgate dev`.
type dev struct {
	frontend  string
	ui        string
	namespace string
	codec     string // the codec server's URL, with --codec-key
}

// startDev starts `toolgate dev` (bin is testbin.Toolgate's) in memory on free ports and waits for
// its address lines. Cleanup interrupts it (Ctrl-C) and waits for it to exit.
func startDev(t *testing.T, _ string, extra ...string) dev {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), readyTimeout)
	defer cancel()
	p, err := testbin.StartDev(ctx, nil, append([]string{"--in-memory", "--port", "0", "--ui-port", "0"}, extra...)...)
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := p.Stop(stopTimeout); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("toolgate dev stderr:\n%s", p.StderrTail(8000))
		}
	})
	d := dev{frontend: p.Frontend(), ui: p.Ready["ui"], namespace: p.Namespace(), codec: p.Ready["codec-server"]}
	require.NotEmpty(t, d.ui, "no ui line: %v", p.Ready)
	t.Logf("toolgate dev: frontend %s, ui %s", d.frontend, d.ui)
	return d
}

// runToolgate runs one toolgate command to completion, requires exit code 0 and returns stdout.
func runToolgate(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "toolgate %s: %s", strings.Join(args, " "), tail(stderr.String(), 4000))
	return stdout.String()
}

// moduleRoot is the directory of this module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := testbin.Root()
	require.NoError(t, err)
	return root
}

// artifactDir is $TOOLGATE_ARTIFACTS, else .artifacts at the module root; created if missing.
func artifactDir(t *testing.T, root string) string {
	t.Helper()
	dir := os.Getenv("TOOLGATE_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(root, ".artifacts")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// childEnv is this process's environment without TEMPORAL_* and TOOLGATE_* variables (the test
// sets the ones it means), plus extra.
var childEnv = testbin.ChildEnv

type syncBuffer = testbin.SyncBuffer

// withoutDBus drops Chromium's complaints that there is no D-Bus, which it makes by the dozen on
// machines without a desktop session and which say nothing about the page.
func withoutDBus(s string) string {
	var kept []string
	for _, line := range strings.Split(s, "\n") {
		if !strings.Contains(line, "dbus/") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}

var tail = testbin.Tail
