package main

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/codec"
)

// TestCodecServerProcessRotatesKeysAndServesSessions runs `toolgate codec-server` with a token
// and --metrics-listen: a browser-like client logs in at /login and decodes with the session
// cookie; the key file is rotated in two phases under it, `toolgate codec keys` follows the
// server's toolgate_codec_keys gauge, and the server encrypts with the new key only in phase 2.
func TestCodecServerProcessRotatesKeysAndServesSessions(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.txt")
	writeKeyFile(t, keys, rotationKeyLine("k1", 21, ""))
	tokenFile := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600))
	const ui = "http://127.0.0.1:8233"
	p := startProcess(t, childEnv(), "codec-server", "--codec-key", keys, "--token-file", tokenFile,
		"--ui-origin", ui, "--metrics-listen", "127.0.0.1:0")
	metricsURL := regexp.MustCompile(`http://127\.0\.0\.1:\d+/metrics`).FindString(p.waitLine(t, p.stderr, "serving Prometheus metrics"))
	require.NotEmpty(t, metricsURL)
	server := strings.TrimPrefix(p.waitLine(t, p.stdout, "codec-server "), "codec-server ")

	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar}
	post := func(c *http.Client, path, bearer, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, server+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Origin", ui)
		req.Header.Set("Content-Type", "application/json")
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := c.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, _ := post(browser, "/decode", "", `{"payloads":[]}`)
	require.Equal(t, http.StatusUnauthorized, code, "no session yet")
	login, err := http.NewRequest(http.MethodPost, server+"/login", strings.NewReader(url.Values{"token": {"s3cret"}}.Encode()))
	require.NoError(t, err)
	login.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := browser.Do(login)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	code, body := post(browser, "/decode", "", `{"payloads":[]}`)
	require.Equal(t, http.StatusOK, code, "the session cookie decodes: %s", body)

	// encryptKey encodes a payload through the server and returns the key ID it names.
	encryptKey := func() string {
		code, body := post(http.DefaultClient, "/encode", "s3cret", `{"payloads":[{"metadata":{"encoding":"`+base64.StdEncoding.EncodeToString([]byte("json/plain"))+`"},"data":"`+base64.StdEncoding.EncodeToString([]byte(`"x"`))+`"}]}`)
		require.Equal(t, http.StatusOK, code, body)
		var out struct {
			Payloads []struct {
				Metadata map[string][]byte `json:"metadata"`
			} `json:"payloads"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &out))
		require.Len(t, out.Payloads, 1)
		return string(out.Payloads[0].Metadata[codec.MetadataKeyID])
	}
	holds := func(want string) {
		t.Helper()
		var got outcome
		require.Eventually(t, func() bool {
			got = toolgate(t, childEnv(), "", "codec", "keys", "--codec-key", keys, "--metrics", metricsURL)
			return got.code == ExitOK
		}, lineTimeout, 200*time.Millisecond, "%s%s", got.stdout, got.stderr)
		assert.Equal(t, "file "+keys+": "+want+"\n"+metricsURL+": "+want+"\n", got.stdout)
	}
	holds("k1 encrypt")
	assert.Equal(t, "k1", encryptKey())

	writeKeyFile(t, keys, rotationKeyLine("k2", 22, "decrypt-only")+rotationKeyLine("k1", 21, ""))
	lacking := toolgate(t, childEnv(), "", "codec", "keys", "--codec-key", keys, "--metrics", metricsURL)
	if lacking.code != ExitOK { // unless the server reloaded already
		assert.Equal(t, ExitErrorResult, lacking.code)
		assert.Contains(t, lacking.stdout, metricsURL+": k1 encrypt (lacks k2)")
	}
	holds("k2 decrypt, k1 encrypt")
	assert.Equal(t, "k1", encryptKey(), "phase 1: the old key still encrypts")

	writeKeyFile(t, keys, rotationKeyLine("k2", 22, "")+rotationKeyLine("k1", 21, ""))
	holds("k2 encrypt, k1 decrypt")
	assert.Equal(t, "k2", encryptKey(), "phase 2: the new key encrypts")
	code, _ = post(browser, "/decode", "", `{"payloads":[]}`)
	assert.Equal(t, http.StatusOK, code, "the session outlives a key rotation")

	writeKeyFile(t, keys, rotationKeyLine("k1", 21, ""))
	p.waitLine(t, p.stderr, "codec keys not reloaded")
	assert.Equal(t, "k2", encryptKey(), "a file dropping the encrypting key is refused")
	assert.Equal(t, 0, p.interrupt(t), p.stderrText())
	assert.NotContains(t, p.stderrText(), base64.StdEncoding.EncodeToString([]byte{22, 22, 22, 22, 22, 22}), "no key material in the log")
}

func TestKeyDifference(t *testing.T) {
	file := []codec.KeyInfo{{ID: "k2", Role: codec.RoleDecrypt}, {ID: "k1", Role: codec.RoleEncrypt}}
	tests := []struct {
		name string
		held []codec.KeyInfo
		want string
	}{
		{name: "same", held: []codec.KeyInfo{{ID: "k1", Role: codec.RoleEncrypt}, {ID: "k2", Role: codec.RoleDecrypt}}, want: ""},
		{name: "lacks", held: []codec.KeyInfo{{ID: "k1", Role: codec.RoleEncrypt}}, want: "lacks k2"},
		{name: "role", held: []codec.KeyInfo{{ID: "k1", Role: codec.RoleDecrypt}, {ID: "k2", Role: codec.RoleEncrypt}}, want: "k2 is encrypt here, decrypt in the file; k1 is decrypt here, encrypt in the file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, keyDifference(file, tt.held))
		})
	}
}
