package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEncryptedDevWithMetrics runs `toolgate dev --codec-key --metrics-listen` and checks, with
// the real binary: calls with the key work; the exported history holds no plaintext; replay
// passes with the key and fails without it; the printed codec server decodes the history's
// payloads for the UI's origin; the metrics endpoint counts the calls and serves the embedded
// server's metrics and the call gauges, every series of deploy/'s rules and dashboard among them;
// keys rotate under load on the same server (testKeysRotateUnderLoad); every listener answers the
// probes; a worker's /readyz flips when the server stops.
func TestEncryptedDevWithMetrics(t *testing.T) {
	const canary = "cli-canary-5e1d"
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "keys.txt")
	secret := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))
	require.NoError(t, os.WriteFile(keyFile, []byte("k1 "+secret+"\n"), 0o600))

	dev := startDev(t, "--in-memory", "--codec-key", keyFile, "--metrics-listen", "127.0.0.1:0")
	require.Regexp(t, `^http://127\.0\.0\.1:\d+$`, dev.addr["codec-server"])
	require.Regexp(t, `^http://127\.0\.0\.1:\d+/metrics$`, dev.addr["metrics"])
	env := append(dev.env(), "TOOLGATE_CODEC_KEY="+keyFile)
	plainEnv := dev.env()

	got := toolgate(t, env, "", "call", "--id", "enc", "echo", `{"text":"`+canary+`"}`)
	require.Equal(t, ExitOK, got.code, got.stderr)
	assert.Contains(t, got.stdout, canary)
	got = toolgate(t, env, "", "call", "--id", "enc-bad", "add", `{"left":"x"}`)
	require.Equal(t, ExitErrorResult, got.code, got.stderr)
	assert.NotContains(t, got.stderr, secret, "key material is never logged")

	noKey := toolgate(t, plainEnv, "", "result", "--call-id", "enc")
	assert.NotEqual(t, ExitOK, noKey.code, "without the key the result cannot be read")
	assert.NotContains(t, noKey.stdout, canary)

	histFile := filepath.Join(dir, "enc.json")
	got = toolgate(t, plainEnv, "", "history", "--call-id", "enc", "-o", histFile)
	require.Equal(t, ExitOK, got.code, got.stderr)
	hist, err := os.ReadFile(histFile)
	require.NoError(t, err)
	payloads := historyPayloads(t, hist)
	require.NotEmpty(t, payloads)
	encrypted := 0
	for _, p := range payloads {
		assert.NotContains(t, string(p), canary, "the server's history holds ciphertext only")
		if strings.Contains(string(p), "binary/encrypted") {
			encrypted++
		}
	}
	assert.Positive(t, encrypted, "payload metadata names the encrypted encoding")

	got = toolgate(t, env, "", "replay", histFile)
	assert.Equal(t, ExitOK, got.code, got.stdout+got.stderr)
	got = toolgate(t, plainEnv, "", "replay", histFile)
	assert.Equal(t, ExitErrorResult, got.code, "replay without the key cannot decode the input")

	t.Run("codec server decodes for the UI", func(t *testing.T) {
		var h struct {
			Events []struct {
				Attrs struct {
					Input struct {
						Payloads []json.RawMessage `json:"payloads"`
					} `json:"input"`
				} `json:"workflowExecutionStartedEventAttributes"`
			} `json:"events"`
		}
		require.NoError(t, json.Unmarshal(hist, &h))
		body, err := json.Marshal(map[string]any{"payloads": h.Events[0].Attrs.Input.Payloads})
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, dev.addr["codec-server"]+"/decode", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Origin", dev.addr["ui"])
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(out))
		assert.Equal(t, dev.addr["ui"], resp.Header.Get("Access-Control-Allow-Origin"))
		var decoded struct {
			Payloads []struct {
				Data []byte `json:"data"`
			} `json:"payloads"`
		}
		require.NoError(t, json.Unmarshal(out, &decoded))
		require.Len(t, decoded.Payloads, 1)
		assert.Contains(t, string(decoded.Payloads[0].Data), canary)
	})

	t.Run("metrics count the calls", func(t *testing.T) {
		okCalls := regexp.MustCompile(`(?m)^toolgate_tool_calls_total\{[^}]*outcome="ok"[^}]*tool="echo"[^}]*\} 1$`)
		rejected := regexp.MustCompile(`(?m)^toolgate_validation_rejections_total\{[^}]*code="TOOL_ARGUMENTS_INVALID"[^}]*tool="add"[^}]*\} 1$`)
		var text string
		require.Eventually(t, func() bool {
			resp, err := http.Get(dev.addr["metrics"])
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			text = string(b)
			return okCalls.MatchString(text) && rejected.MatchString(text)
		}, lineTimeout, 100*time.Millisecond)
		assert.True(t, strings.Contains(text, "temporal_workflow_completed_total"), "the SDK's metrics are served too")

		// The embedded server's own metrics, and the call gauges counted in visibility.
		closed := regexp.MustCompile(`(?m)^task_latency_queue_count\{[^}]*operation="VisibilityTaskCloseExecution"`)
		running := regexp.MustCompile(`(?m)^toolgate_calls_running\{namespace="default",task_queue="toolgate"\} 0$`)
		require.Eventually(t, func() bool {
			text = get(t, dev.addr["metrics"])
			return closed.MatchString(text) && running.MatchString(text)
		}, lineTimeout, 100*time.Millisecond, "the server's task_latency_queue and toolgate_calls_running")
		// Every series deploy/'s alert rules and dashboard name is one this scrape shows.
		var parser expfmt.TextParser
		families, err := parser.TextToMetricFamilies(strings.NewReader(text))
		require.NoError(t, err)
		names := map[string]bool{}
		for name := range families {
			names[name] = true
		}
		assert.Empty(t, missingSeries(referencedSeries(t), names), "series the rules or the dashboard name that toolgate dev does not export")
	})

	t.Run("probes answer on every listener without a token, whatever the Host", func(t *testing.T) {
		metricsBase := strings.TrimSuffix(dev.addr["metrics"], "/metrics")
		for _, base := range []string{metricsBase, dev.addr["codec-server"]} {
			for _, path := range []string{"/healthz", "/readyz"} {
				code, body := probeGet(t, base+path)
				assert.Equal(t, http.StatusOK, code, base+path)
				assert.NotContains(t, body, "toolgate_", base+path)
			}
		}
	})

	t.Run("a rebinding Host gets 421 from the codec server and the metrics", func(t *testing.T) {
		for _, url := range []string{dev.addr["codec-server"] + "/decode", dev.addr["metrics"]} {
			method := http.MethodGet
			if strings.HasSuffix(url, "/decode") {
				method = http.MethodPost
			}
			req, err := http.NewRequest(method, url, strings.NewReader(`{"payloads":[]}`))
			require.NoError(t, err)
			req.Host = "evil.example"
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode, url)
			assert.NotContains(t, string(b), "toolgate_tool_calls_total", url)
		}
	})

	t.Run("keys rotate under load", func(t *testing.T) { testKeysRotateUnderLoad(t, dev.env()) })

	t.Run("mcp serves the SDK client's metrics", func(t *testing.T) {
		mcp := startProcess(t, env, "mcp", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0")
		url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/metrics`).FindString(mcp.waitLine(t, mcp.stderr, "serving Prometheus metrics"))
		require.NotEmpty(t, url)
		listening := mcp.waitLine(t, mcp.stderr, "MCP streamable HTTP") // the tool list was fetched: client requests made
		var text string
		require.Eventually(t, func() bool {
			resp, err := http.Get(url)
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			text = string(b)
			return strings.Contains(text, "temporal_request")
		}, lineTimeout, 100*time.Millisecond, "the mcp process's SDK client counts its requests")
		mcpURL := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(listening)
		for _, probe := range []string{mcpURL + "/healthz", mcpURL + "/readyz", strings.TrimSuffix(url, "/metrics") + "/readyz"} {
			code, _ := probeGet(t, probe)
			assert.Equal(t, http.StatusOK, code, probe)
		}
		code, _ := probeGet(t, mcpURL+"/mcp")
		assert.Equal(t, http.StatusForbidden, code, "/mcp keeps its Host check")
		assert.Equal(t, 0, mcp.interrupt(t), mcp.stderrText())
	})

	// Last: it stops the dev server.
	t.Run("a worker's readyz flips when Temporal goes away", func(t *testing.T) {
		w := startProcess(t, env, "worker", "--task-queue", "readyz-flip", "--metrics-listen", "127.0.0.1:0")
		base := strings.TrimSuffix(regexp.MustCompile(`http://127\.0\.0\.1:\d+/metrics`).FindString(w.waitLine(t, w.stderr, "serving Prometheus metrics")), "/metrics")
		require.NotEmpty(t, base)
		require.Eventually(t, func() bool { code, _ := probeGet(t, base+"/readyz"); return code == http.StatusOK },
			lineTimeout, 100*time.Millisecond, "ready once polling")
		assert.Equal(t, 0, dev.interrupt(t), dev.stderrText())
		require.Eventually(t, func() bool { code, _ := probeGet(t, base+"/readyz"); return code == http.StatusServiceUnavailable },
			lineTimeout, 100*time.Millisecond, "not ready once the frontend is gone")
		code, _ := probeGet(t, base+"/healthz")
		assert.Equal(t, http.StatusOK, code, "still live: the process serves")
	})
}

// get returns the body of a GET of url ("" on an error).
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// probeGet GETs url as a kubelet probe does: no token, the pod's IP as Host (here neither
// loopback nor allowed).
func probeGet(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Host = "10.9.8.7:8080"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// historyPayloads returns every base64 "data" and metadata value of an exported history, decoded.
func historyPayloads(t *testing.T, hist []byte) [][]byte {
	t.Helper()
	var doc any
	require.NoError(t, json.Unmarshal(hist, &doc))
	var out [][]byte
	var walk func(v any, inPayload bool)
	walk = func(v any, inPayload bool) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if s, ok := child.(string); ok && (k == "data" || inPayload) {
					if b, err := base64.StdEncoding.DecodeString(s); err == nil {
						out = append(out, b)
					}
					continue
				}
				walk(child, k == "metadata")
			}
		case []any:
			for _, child := range v {
				walk(child, false)
			}
		}
	}
	walk(doc, false)
	return out
}
