package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/wire"
)

// The task routing header (SEP-2663 over SEP-2243's standard headers): a 2026-07-28 request of
// tasks/get, tasks/update or tasks/cancel over streamable HTTP carries Mcp-Name: <taskId>, the
// params.taskId of its body. go-sdk v1.8.0 checks Mcp-Name for tools/call, prompts/get and
// resources/read only, and sends it only for those: HTTPHandler checks the task methods before
// dispatch (refuseTaskRouting), and toolgate's clients set it (TaskRoutingTransport). Headers
// exist over HTTP only: stdio has nothing to check. A task ID that cannot ride as a plain header
// value travels as SEP-2243's sentinel `=?base64?<standard Base64 of its UTF-8>?=`: the server
// decodes before comparing, the transport encodes (mcpNameValue, mcpNameDecoded).

// taskRoutedMethods are the methods whose Mcp-Name is the task ID.
var taskRoutedMethods = []string{wire.MCPMethodTasksGet, wire.MCPMethodTasksUpdate, wire.MCPMethodTasksCancel}

// taskRouting is the method and task ID of a request body, when it is one of taskRoutedMethods.
func taskRouting(body []byte) (req *jsonrpc.Request, taskID string, ok bool) {
	if !bytes.Contains(body, []byte(`"tasks/`)) {
		return nil, "", false // the common case: no second parse
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return nil, "", false // a batch or malformed: go-sdk answers it
	}
	req, isReq := msg.(*jsonrpc.Request)
	if !isReq || !req.IsCall() || !slices.Contains(taskRoutedMethods, req.Method) {
		return nil, "", false
	}
	var params struct {
		TaskID string `json:"taskId"`
	}
	_ = json.Unmarshal(req.Params, &params) // no taskId: "", and the task method answers -32602
	return req, params.TaskID, true
}

// refuseTaskRouting answers a 2026-07-28 POST of a task method whose Mcp-Name header is missing
// or is not its params.taskId (compared without surrounding whitespace, RFC 9110 section 5.5):
// HTTP 400 with the JSON-RPC error -32020. It reports whether it answered.
func refuseTaskRouting(w http.ResponseWriter, r *http.Request, body []byte) bool {
	req, taskID, ok := taskRouting(body)
	if !ok {
		return false
	}
	var message string
	switch names := r.Header.Values(mcpNameHeader); {
	case len(names) == 0:
		message = fmt.Sprintf("missing required %s header for method %q: it names the task, %q", mcpNameHeader, req.Method, taskID)
	default:
		name, ok := mcpNameDecoded(strings.TrimSpace(names[0]))
		switch {
		case !ok:
			message = fmt.Sprintf("header mismatch: %s %q is not valid =?base64?...?=", mcpNameHeader, names[0])
		case name != taskID:
			message = fmt.Sprintf("header mismatch: %s %q is not the taskId %q", mcpNameHeader, names[0], taskID)
		default:
			return false
		}
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: sdk.CodeHeaderMismatch, Message: message}})
	if err != nil {
		http.Error(w, message, http.StatusBadRequest)
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(data)
	return true
}

// TaskRoutingTransport wraps base (http.DefaultTransport when nil) for a streamable HTTP client
// of 2026-07-28 servers: a POST of tasks/get, tasks/update or tasks/cancel (its Mcp-Method header,
// which go-sdk sets at that revision) gets Mcp-Name: <taskId>, which go-sdk v1.8.0 does not set.
// Other requests pass untouched, their bodies unread.
func TaskRoutingTransport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return taskRoutingTransport{base}
}

type taskRoutingTransport struct{ base http.RoundTripper }

func (t taskRoutingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || !slices.Contains(taskRoutedMethods, req.Header.Get("Mcp-Method")) {
		return t.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	if _, taskID, ok := taskRouting(body); ok && req.Header.Get(mcpNameHeader) == "" {
		req.Header.Set(mcpNameHeader, mcpNameValue(taskID))
	}
	return t.base.RoundTrip(req)
}

// The SEP-2243 sentinel of a header value carried as Base64.
const base64Prefix, base64Suffix = "=?base64?", "?="

// mcpNameValue is name as a header value: itself when it is printable ASCII without surrounding
// blanks and does not look like the sentinel, the sentinel of its UTF-8 bytes otherwise.
func mcpNameValue(name string) string {
	plain := strings.Trim(name, " \t") == name &&
		!(strings.HasPrefix(name, base64Prefix) && strings.HasSuffix(name, base64Suffix)) &&
		!strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r > 0x7e })
	if plain {
		return name
	}
	return base64Prefix + base64.StdEncoding.EncodeToString([]byte(name)) + base64Suffix
}

// mcpNameDecoded is the name a header value carries: the decoded sentinel, or the value itself.
// It is false for a sentinel whose Base64 is invalid.
func mcpNameDecoded(value string) (string, bool) {
	encoded, ok := strings.CutPrefix(value, base64Prefix)
	if !ok {
		return value, true
	}
	if encoded, ok = strings.CutSuffix(encoded, base64Suffix); !ok {
		return value, true
	}
	decoded, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return "", false
	}
	return string(decoded), true
}
