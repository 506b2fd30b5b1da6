package codec_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/toolgate/toolgate/codec"
)

func key(id string, b byte) codec.Key {
	return codec.Key{ID: id, Secret: bytes.Repeat([]byte{b}, codec.KeySize)}
}

func keyring(t *testing.T, keys ...codec.Key) *codec.Keyring {
	t.Helper()
	r, err := codec.NewKeyring(keys...)
	require.NoError(t, err)
	return r
}

func TestRoundTripHidesPlaintext(t *testing.T) {
	dc := codec.DataConverter(keyring(t, key("k1", 1)))
	p, err := dc.ToPayload(map[string]string{"secret": "hunter2"})
	require.NoError(t, err)
	assert.NotContains(t, string(p.GetData()), "hunter2")
	assert.Equal(t, codec.EncodingEncrypted, string(p.GetMetadata()[codec.MetadataEncoding]))
	assert.Equal(t, "k1", string(p.GetMetadata()[codec.MetadataKeyID]))
	var got map[string]string
	require.NoError(t, dc.FromPayload(p, &got))
	assert.Equal(t, "hunter2", got["secret"])
}

func TestRotationKeepsOldPayloadsReadable(t *testing.T) {
	old := codec.New(keyring(t, key("k1", 1)))
	rotated := codec.New(keyring(t, key("k2", 2), key("k1", 1)))
	plain := converter.GetDefaultDataConverter()
	p, err := plain.ToPayload("before rotation")
	require.NoError(t, err)
	enc, err := old.Encode([]*commonpb.Payload{p})
	require.NoError(t, err)

	dec, err := rotated.Decode(enc)
	require.NoError(t, err)
	var s string
	require.NoError(t, plain.FromPayload(dec[0], &s))
	assert.Equal(t, "before rotation", s)

	enc2, err := rotated.Encode([]*commonpb.Payload{p})
	require.NoError(t, err)
	assert.Equal(t, "k2", string(enc2[0].GetMetadata()[codec.MetadataKeyID]), "the first key encrypts")
	_, err = old.Decode(enc2)
	require.ErrorContains(t, err, `unknown key ID "k2"`)
}

func TestDecodeRejectsTamperingAndPassesPlain(t *testing.T) {
	c := codec.New(keyring(t, key("k1", 1), key("k2", 2)))
	plain := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`"x"`)}
	enc, err := c.Encode([]*commonpb.Payload{plain})
	require.NoError(t, err)

	tampered := &commonpb.Payload{Metadata: enc[0].GetMetadata(), Data: bytes.Clone(enc[0].GetData())}
	tampered.Data[len(tampered.Data)-1] ^= 1
	_, err = c.Decode([]*commonpb.Payload{tampered})
	assert.ErrorContains(t, err, "authentication failed")

	// Relabelled to another key the ring holds: the key ID is authenticated data.
	relabelled := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte(codec.EncodingEncrypted), codec.MetadataKeyID: []byte("k2")}, Data: enc[0].GetData()}
	_, err = c.Decode([]*commonpb.Payload{relabelled})
	assert.ErrorContains(t, err, "authentication failed")

	out, err := c.Decode([]*commonpb.Payload{plain})
	require.NoError(t, err)
	assert.Same(t, plain, out[0], "unencrypted payloads pass through")
}

func TestParseKeyring(t *testing.T) {
	secret := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	short := base64.StdEncoding.EncodeToString([]byte("short"))
	tests := []struct {
		name    string
		give    string
		wantErr string
		wantID  string
	}{
		{name: "two keys, comments", give: "# c\n\nnew " + secret + "\nold " + secret + "\n", wantID: "new"},
		{name: "empty", give: "# nothing\n", wantErr: "no key"},
		{name: "bad base64", give: "k1 !!notbase64" + secret, wantErr: `(key "k1"): the key is not standard base64`},
		{name: "short key", give: "k1 " + short, wantErr: "has 5 bytes, want 32"},
		{name: "one field", give: secret, wantErr: "line 1"},
		{name: "duplicate", give: "a " + secret + "\na " + secret, wantErr: "duplicate"},
		{name: "bad id", give: "a/b " + secret, wantErr: "ID"},
		{name: "decrypt-only first: the next encrypts", give: "new " + secret + " decrypt-only\nold " + secret + "\n", wantID: "old"},
		{name: "every key decrypt-only", give: "new " + secret + " decrypt-only\n", wantErr: "one must encrypt"},
		{name: "unknown marker", give: "new " + secret + " encrypt-only\n", wantErr: "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := codec.ParseKeyring(tt.give)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.NotContains(t, err.Error(), secret, "errors never show key material")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantID, r.CurrentKeyID())
			assert.NotContains(t, r.String(), secret)
		})
	}
}

func TestLoadKeyringFromEnv(t *testing.T) {
	secret := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32))
	env := map[string]string{"KEYS": "k9 " + secret}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	r, err := codec.LoadKeyring("env:KEYS", lookup)
	require.NoError(t, err)
	assert.Equal(t, "k9", r.CurrentKeyID())
	_, err = codec.LoadKeyring("env:MISSING", lookup)
	assert.ErrorContains(t, err, "MISSING is not set")
}

func TestHandlerProtocol(t *testing.T) {
	c := codec.New(keyring(t, key("k1", 1)))
	h := codec.Handler(c, codec.HandlerOptions{AllowedOrigins: []string{"http://127.0.0.1:8233"}, Token: "tok"})
	p, err := converter.GetDefaultDataConverter().ToPayload("hello codec")
	require.NoError(t, err)
	body, err := json.Marshal(map[string]any{"payloads": []any{map[string]any{
		"metadata": map[string]string{"encoding": base64.StdEncoding.EncodeToString(p.GetMetadata()["encoding"])},
		"data":     base64.StdEncoding.EncodeToString(p.GetData()),
	}}})
	require.NoError(t, err)

	post := func(path, token string, body []byte) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8081"+path, bytes.NewReader(body))
		req.Header.Set("Origin", "http://127.0.0.1:8233")
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	assert.Equal(t, http.StatusUnauthorized, post("/encode", "", body).Code)
	assert.Equal(t, http.StatusUnauthorized, post("/encode", "wrong", body).Code)

	enc := post("/encode", "tok", body)
	require.Equal(t, http.StatusOK, enc.Code, enc.Body.String())
	assert.Equal(t, "http://127.0.0.1:8233", enc.Header().Get("Access-Control-Allow-Origin"))
	assert.NotContains(t, enc.Body.String(), base64.StdEncoding.EncodeToString(p.GetData()))
	assert.Contains(t, enc.Body.String(), base64.StdEncoding.EncodeToString([]byte(codec.EncodingEncrypted)))

	dec := post("/decode", "tok", enc.Body.Bytes())
	require.Equal(t, http.StatusOK, dec.Code, dec.Body.String())
	assert.Contains(t, dec.Body.String(), base64.StdEncoding.EncodeToString(p.GetData()))

	pre := httptest.NewRequest(http.MethodOptions, "http://localhost:8081/decode", nil)
	pre.Header.Set("Origin", "http://evil.example")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, pre)
	assert.Empty(t, rec.Header().Get("Access-Control-Allow-Origin"), "an origin not allowed gets no CORS grant")
	pre.Header.Set("Origin", "http://127.0.0.1:8233")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, pre)
	assert.Equal(t, http.StatusNoContent, rec.Code)
	assert.True(t, strings.Contains(rec.Header().Get("Access-Control-Allow-Headers"), "Authorization"))
}

func TestHandlerRefusesHostsBodiesAndCredentialedWildcard(t *testing.T) {
	c := codec.New(keyring(t, key("k1", 1)))
	tests := []struct {
		name       string
		opts       codec.HandlerOptions
		host       string
		body       []byte
		origin     string
		wantCode   int
		wantOrigin string
		wantCreds  string
	}{
		{name: "rebinding host", host: "evil.example:8081", body: []byte(`{"payloads":[]}`), wantCode: http.StatusMisdirectedRequest},
		{name: "loopback spelling 127.1", host: "127.1:8081", body: []byte(`{"payloads":[]}`), wantCode: http.StatusMisdirectedRequest},
		{name: "allowed host", opts: codec.HandlerOptions{AllowedHosts: []string{"Codec.Internal"}}, host: "codec.internal:8081", body: []byte(`{"payloads":[]}`), wantCode: http.StatusOK},
		{name: "loopback host", host: "localhost:8081", body: []byte(`{"payloads":[]}`), wantCode: http.StatusOK},
		{name: "body over the limit", opts: codec.HandlerOptions{MaxBodyBytes: 64}, host: "127.0.0.1", body: bytes.Repeat([]byte(" "), 65), wantCode: http.StatusRequestEntityTooLarge},
		{name: "body at the limit", opts: codec.HandlerOptions{MaxBodyBytes: 64}, host: "127.0.0.1", body: append([]byte(`{"payloads":[]}`), bytes.Repeat([]byte(" "), 64-15)...), wantCode: http.StatusOK},
		{name: "wildcard origin without credentials", opts: codec.HandlerOptions{AllowedOrigins: []string{"*"}}, host: "127.0.0.1", body: []byte(`{"payloads":[]}`), origin: "http://any.example", wantCode: http.StatusOK, wantOrigin: "*"},
		{name: "named origin with credentials", opts: codec.HandlerOptions{AllowedOrigins: []string{"http://ui.example"}}, host: "127.0.0.1", body: []byte(`{"payloads":[]}`), origin: "http://ui.example", wantCode: http.StatusOK, wantOrigin: "http://ui.example", wantCreds: "true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/decode", bytes.NewReader(tt.body))
			req.Host = tt.host
			req.Header.Set("Origin", tt.origin)
			rec := httptest.NewRecorder()
			codec.Handler(c, tt.opts).ServeHTTP(rec, req)
			assert.Equal(t, tt.wantCode, rec.Code, rec.Body.String())
			assert.Equal(t, tt.wantOrigin, rec.Header().Get("Access-Control-Allow-Origin"))
			assert.Equal(t, tt.wantCreds, rec.Header().Get("Access-Control-Allow-Credentials"))
		})
	}
}
