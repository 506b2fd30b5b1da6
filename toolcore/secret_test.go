package toolcore_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// mapSource is a SecretSource over a map.
type mapSource map[string]string

func (m mapSource) Secret(_ context.Context, name string) (string, error) {
	v, ok := m[name]
	if !ok {
		return "", fmt.Errorf("%s: %w", name, toolcore.ErrSecretNotFound)
	}
	return v, nil
}

const testKey = "sk-live-7f3a9c1e2b8d4f60"

func resolved(t *testing.T, values map[string]string) *toolcore.Secrets {
	t.Helper()
	var names []string
	for n := range values {
		names = append(names, n)
	}
	sec, err := toolcore.ResolveSecrets(context.Background(), mapSource(values), "t", names)
	require.NoError(t, err)
	return sec
}

func TestRedactEveryForm(t *testing.T) {
	value := "p@ss/w+rd=\"x\"\\tail"
	sec := resolved(t, map[string]string{"api_key": value})
	b := []byte(value)
	forms := map[string]string{
		"raw":         value,
		"query":       url.QueryEscape(value),
		"path":        url.PathEscape(value),
		"base64":      base64.StdEncoding.EncodeToString(b),
		"base64url":   base64.URLEncoding.EncodeToString(b),
		"base64raw":   base64.RawStdEncoding.EncodeToString(b),
		"base64rawur": base64.RawURLEncoding.EncodeToString(b),
		"bearer":      "Bearer " + value,
	}
	quoted, _ := json.Marshal(value)
	forms["json"] = string(quoted)
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			got := sec.Redact("before " + form + " after")
			assert.NotContains(t, got, form)
			assert.Contains(t, got, "[REDACTED:api_key]")
			assert.True(t, strings.HasPrefix(got, "before "), got)
		})
	}
}

func TestRedactCutSecretAtTheBound(t *testing.T) {
	sec := resolved(t, map[string]string{"api_key": testKey})
	// A bound cut the key after its first 9 bytes.
	got := sec.Redact("GET https://api.example/v1?key=" + testKey[:9] + toolcore.TruncationMarker)
	assert.NotContains(t, got, testKey[:9])
	assert.True(t, strings.HasSuffix(got, "[REDACTED:api_key]"+toolcore.TruncationMarker), got)
	got = sec.Redact("failed: key=" + testKey[:12] + toolcore.ErrorTextEllipsis)
	assert.NotContains(t, got, testKey[:12])
	// Ordinary text that shares no prefix of length 4 is left alone.
	assert.Equal(t, "failed: key=sk-l", sec.Redact("failed: key=sk-l"))
}

func TestRedactResultKeepsTheBounds(t *testing.T) {
	sec := resolved(t, map[string]string{"a_rather_long_secret_name": "12345678"})
	call := mustCall(t, "t")
	// Every 8-byte value becomes a 36-byte marker: redaction grows the content past the cap.
	content := strings.Repeat("12345678 ", toolcore.MaxContentCodePoints/9)
	res := sec.RedactResult(call, toolcore.SuccessResult(call, content))
	assert.NotContains(t, res.Content(), "12345678")
	assert.LessOrEqual(t, utf8.RuneCountInString(res.Content()), toolcore.MaxContentCodePoints)
	assert.True(t, strings.HasSuffix(res.Content(), toolcore.TruncationMarker))

	errRes := sec.RedactResult(call, toolcore.ErrorResult(call, toolcore.CodeToolExecutionFailed, strings.Repeat("key 12345678; ", 200)))
	assert.NotContains(t, errRes.Content(), "12345678")
	assert.Equal(t, toolcore.CodeToolExecutionFailed, errRes.ErrorCode())
	assert.True(t, json.Valid([]byte(errRes.Content())), errRes.Content())
	assert.LessOrEqual(t, utf8.RuneCountInString(errRes.Content()), toolcore.MaxContentCodePoints)
}

func TestRedactCheckpoint(t *testing.T) {
	sec := resolved(t, map[string]string{"k": testKey, "n": "123456789"})
	red, ok := sec.RedactCheckpoint(json.RawMessage(`{"url":"https://x?key=` + testKey + `"}`))
	require.True(t, ok)
	assert.JSONEq(t, `{"url":"https://x?key=[REDACTED:k]"}`, string(red))
	_, ok = sec.RedactCheckpoint(json.RawMessage(`{"n":123456789}`)) // a bare number: dropped
	assert.False(t, ok)
}

func TestResolveSecretsErrorsNameTheSecretOnly(t *testing.T) {
	ctx := context.Background()
	_, err := toolcore.ResolveSecrets(ctx, mapSource{}, "t", []string{"api_key"})
	var se *toolcore.SecretError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, `secret "api_key" is not set on the worker`, err.Error())

	_, err = toolcore.ResolveSecrets(ctx, mapSource{"short": "abc"}, "t", []string{"short"})
	require.ErrorAs(t, err, &se)
	assert.NotContains(t, err.Error(), "abc")
	assert.Contains(t, err.Error(), "too short")

	_, err = toolcore.ResolveSecrets(ctx, nil, "t", []string{"api_key"})
	assert.ErrorContains(t, err, "no secret source")

	_, err = toolcore.ResolveSecrets(ctx, failingSource{}, "t", []string{"api_key"})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, `secret "api_key" could not be read on the worker`, err.Error())
	assert.NotContains(t, err.Error(), "vault")
}

type failingSource struct{}

func (failingSource) Secret(context.Context, string) (string, error) {
	return "", errors.New("vault at 10.0.0.7 refused the token hvs.ABCDEF")
}

func TestSecretOptionsAreChecked(t *testing.T) {
	for name, opts := range map[string]toolcore.Options{
		"bad name":          {Secrets: []string{"api key"}},
		"duplicate":         {Secrets: []string{"a", "a"}},
		"bad provider":      {Credentials: []toolcore.Credential{{Provider: "git hub"}}},
		"bad scope":         {Credentials: []toolcore.Credential{{Provider: "gh", Scopes: []string{"a b"}}}},
		"local with secret": {SideEffect: toolcore.ReadOnly, Local: true, Secrets: []string{"a"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := toolcore.Define(toolcore.Definition[struct{}]{
				Name: "t", Description: "d", Options: opts,
				Execute: func(context.Context, struct{}) (any, error) { return nil, nil },
			})
			assert.Error(t, err)
		})
	}
}

// keyTool reads its key and fails the way net/http does, with the key in the URL.
var keyTool = toolcore.MustDefine(toolcore.Definition[struct{}]{
	Name: "fetch", Description: "fetches with a key",
	Options: toolcore.Options{Secrets: []string{"api_key"}},
	Execute: func(ctx context.Context, _ struct{}) (any, error) {
		key, err := toolcore.Secret(ctx, "api_key")
		if err != nil {
			return nil, err
		}
		if _, err := toolcore.Secret(ctx, "other"); err == nil {
			return nil, errors.New("an undeclared secret was handed out")
		}
		toolcore.ReportProgress(ctx, toolcore.Progress{Message: "calling ?key=" + key})
		return nil, fmt.Errorf(`Get "https://api.example/v1?key=%s": dial tcp: connection refused`, url.QueryEscape(key))
	},
})

func TestExecuteRedactsTheKeyFromResultAndProgress(t *testing.T) {
	reg, err := toolcore.NewRegistry(keyTool)
	require.NoError(t, err)
	call := mustCall(t, "fetch")
	progress := make(chan toolcore.Progress, 16)
	res, err := toolcore.ExecuteWith(context.Background(), reg, call, toolcore.ExecuteOptions{
		Secrets:    mapSource{"api_key": testKey},
		OnProgress: func(p toolcore.Progress) { progress <- p },
	})
	require.NoError(t, err)
	assert.True(t, res.IsError())
	assert.NotContains(t, res.Content(), testKey)
	assert.Contains(t, res.Content(), "key=[REDACTED:api_key]")
	p := <-progress
	assert.Equal(t, "calling ?key=[REDACTED:api_key]", p.Message)

	// Without the secret the tool does not run, and the message names the secret.
	res, err = toolcore.ExecuteWith(context.Background(), reg, call, toolcore.ExecuteOptions{Secrets: mapSource{}})
	require.NoError(t, err)
	assert.Equal(t, `secret "api_key" is not set on the worker; the tool did not run`, res.ErrorMessage())
}

func mustCall(t *testing.T, tool string) toolcore.ToolCall {
	t.Helper()
	call, err := toolcore.NewToolCall("c1", tool, []byte(`{}`))
	require.NoError(t, err)
	return call
}

func TestSecretOutsideAnExecution(t *testing.T) {
	_, err := toolcore.Secret(context.Background(), "api_key")
	assert.Error(t, err)
	_, err = toolcore.AccessToken(context.Background(), "gh")
	assert.Error(t, err)
}
