package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkclient "go.temporal.io/sdk/client"

	tgclient "github.com/toolgate/toolgate/client"
	"github.com/toolgate/toolgate/internal/consenttest"
	"github.com/toolgate/toolgate/wire"
)

// A foreground call that waits for its principal's consent prints the URL to open on stderr,
// once; status shows the wait (provider, scopes, since, until, the URL escaped) and --json
// carries it whole; the consent's signal lets the call go on to its result (issue 33 item 3).
// The call's workflow is consenttest's stand-in, on a worker of this test process.
func TestCallAndStatusShowConsentWait(t *testing.T) {
	dev := startDev(t, "--in-memory", "--no-ui")
	c, err := sdkclient.Dial(sdkclient.Options{HostPort: dev.addr["frontend"], Namespace: "default"})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	const queue = "e2e-consent"
	stop, err := consenttest.Start(c, queue)
	require.NoError(t, err)
	t.Cleanup(stop)
	url := "https://auth.example.com/authorize?state=st-9&note=<script>\x1b]8;;http://evil\x1b\\</script>"
	args, err := json.Marshal(consenttest.Args{Provider: "github", URL: url})
	require.NoError(t, err)

	call := startProcess(t, dev.env(), "call", "--task-queue", queue, "--id", "e2e-consent", "read_repo", string(args))
	notice := call.waitLine(t, call.stderr, "consent")
	assert.Contains(t, notice, "toolgate: the call waits for its principal's consent to github (scopes repo read:user) until ")
	assert.Contains(t, notice, `open https://auth.example.com/authorize?state=st-9&note=<script>\u001b]8;;http://evil\u001b\</script>;`)
	assertNoRaw(t, notice)

	got := toolgate(t, dev.env(), "", "status", "toolcall-e2e-consent")
	require.Equal(t, ExitOK, got.code, got.stderr)
	var line string
	for _, l := range strings.Split(got.stdout, "\n") {
		if strings.HasPrefix(l, "consent ") {
			line = l
		}
	}
	assert.Regexp(t, `^consent   awaiting consent to github \(scopes repo read:user\) since \S+Z until \S+Z: https://auth\.example\.com/authorize\?state=st-9&note=<script>\\u001b]8;;http://evil\\u001b\\</script>$`, line, got.stdout)
	assertNoRaw(t, got.stdout)
	got = toolgate(t, dev.env(), "", "status", "toolcall-e2e-consent", "--json")
	require.Equal(t, ExitOK, got.code, got.stderr)
	var st statusJSON
	require.NoError(t, json.Unmarshal([]byte(got.stdout), &st))
	require.NotNil(t, st.Consent, got.stdout)
	assert.True(t, st.Consent.Waiting)
	assert.Equal(t, url, st.Consent.Request.URL, "--json carries the URL as it is, JSON-escaped")
	assert.Equal(t, "github", st.Consent.Request.Provider)

	require.NoError(t, c.SignalWorkflow(t.Context(), "toolcall-e2e-consent", "", wire.SignalConsent, wire.ConsentSignal{Provider: "github"}))
	out := call.waitLine(t, call.stdout, `"toolCallId"`)
	assert.Contains(t, out, `"content":"{\"consented\":true}"`)
	select {
	case <-call.exited:
	case <-time.After(processTimeout):
		require.FailNow(t, "call did not exit after its result", "stderr:\n%s", call.stderrText())
	}
	assert.Equal(t, ExitOK, call.code, call.stderrText())
	assert.Equal(t, 1, strings.Count(call.stderrText(), "consent to github"), "the URL once: %s", call.stderrText())

	got = toolgate(t, dev.env(), "", "status", "toolcall-e2e-consent")
	require.Equal(t, ExitOK, got.code, got.stderr)
	assert.NotContains(t, got.stdout, "consent ", "a completed call shows no wait")
}

// TestStatusOfCallAwaitingConsent: status's consent line escapes what a provider's configuration
// and a tool put in it, and says when the worker did not answer with the request.
func TestStatusOfCallAwaitingConsent(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range attacks {
		t.Run(tt.name, func(t *testing.T) {
			st := tgclient.Status{WorkflowID: "toolcall-c1", State: tgclient.Running, Consent: &wire.ConsentState{
				Waiting: true, Since: since, Deadline: since.Add(time.Hour),
				Request: wire.ConsentRequest{Provider: "gh" + tt.raw, Scopes: []string{"repo"}, URL: "https://a.example/?x=" + tt.raw},
			}}
			var text bytes.Buffer
			require.NoError(t, writeStatus(&text, st, nil, false))
			assert.Contains(t, text.String(), "consent   awaiting consent to gh"+tt.shown+" (scopes repo) since 2026-01-02T03:04:05Z until 2026-01-02T04:04:05Z: https://a.example/?x="+tt.shown+"\n")
			assertNoRaw(t, text.String())
		})
	}
	var text bytes.Buffer
	st := tgclient.Status{WorkflowID: "toolcall-c1", State: tgclient.Running, Consent: &wire.ConsentState{Waiting: true}}
	require.NoError(t, writeStatus(&text, st, nil, false))
	assert.Contains(t, text.String(), "consent   awaiting consent (no worker answered the query; the URL shows once one does)\n")
}
