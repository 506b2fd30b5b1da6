package toolcore_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

// sum is the hex SHA-256 of data.
func sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// A result with parts encodes them after isError; without parts it is the six fields byte for
// byte, so recorded histories replay unchanged.
func TestResultPartsWireShape(t *testing.T) {
	call := contractCall(t, "shot", `{}`, "call-1")
	png := []byte("\x89PNG....")
	claims := []toolcore.PartClaim{
		toolcore.ClaimPart(toolcore.Image("image/png", png), "k1"),
		toolcore.ClaimPart(toolcore.TextPart("caption"), "ignored"),
		toolcore.ClaimPart(toolcore.ResourceLink("https://example.com/r", "report", "text/csv"), ""),
	}

	withParts, err := toolcore.LinkResult(call, "done", false, claims).MarshalJSON()
	require.NoError(t, err)
	without, err := toolcore.LinkResult(call, "done", false, nil).MarshalJSON()
	require.NoError(t, err)

	assert.Equal(t, `{"id":"tool-result-call-1","role":"toolResult","toolCallId":"call-1","toolName":"shot","content":"done","isError":false,"parts":[`+
		`{"type":"image","mimeType":"image/png","size":8,"sha256":"`+sum(png)+`","key":"k1"},`+
		`{"type":"text","mimeType":"text/plain","size":7,"sha256":"`+sum([]byte("caption"))+`","text":"caption"},`+
		`{"type":"resource_link","mimeType":"text/csv","uri":"https://example.com/r","name":"report"}]}`, string(withParts))
	assert.Equal(t, `{"id":"tool-result-call-1","role":"toolResult","toolCallId":"call-1","toolName":"shot","content":"done","isError":false}`, string(without))

	var back toolcore.Result
	require.NoError(t, json.Unmarshal(withParts, &back))
	assert.Equal(t, claims, back.Parts())
	again, err := back.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, string(withParts), string(again))
}

// The decoder accepts the old six-field shape and a valid "parts", and refuses every malformed
// one.
func TestResultPartsUnmarshalJSONIsStrict(t *testing.T) {
	head := `{"id":"tool-result-c","role":"toolResult","toolCallId":"c","toolName":"t","content":"x","isError":false`
	okSHA := sum([]byte("abc"))
	image := `{"type":"image","mimeType":"image/png","size":3,"sha256":"` + okSHA + `","key":"k"}`
	tests := []struct {
		name string
		give string
		want string // "" accepts
	}{
		{name: "six fields", give: head + `}`},
		{name: "one image", give: head + `,"parts":[` + image + `]}`},
		{name: "parts first", give: `{"parts":[` + image + `],` + head[1:] + `}`},
		{name: "empty", give: head + `,"parts":[]}`, want: "must not be empty"},
		{name: "null", give: head + `,"parts":null}`, want: "must not be empty"},
		{name: "object", give: head + `,"parts":{}}`, want: "parts"},
		{name: "unknown claim field", give: head + `,"parts":[{"type":"image","mimeType":"image/png","data":"AAAA"}]}`, want: "unknown field"},
		{name: "duplicate claim field", give: head + `,"parts":[{"type":"image","type":"audio"}]}`, want: "duplicate"},
		{name: "unknown type", give: head + `,"parts":[{"type":"video","sha256":"` + okSHA + `"}]}`, want: "not one of"},
		{name: "image without image mime", give: head + `,"parts":[{"type":"image","mimeType":"text/html","size":3,"sha256":"` + okSHA + `"}]}`, want: "mimeType image/"},
		{name: "bad sha", give: head + `,"parts":[{"type":"image","mimeType":"image/png","size":3,"sha256":"ABC"}]}`, want: "sha256"},
		{name: "key with slash", give: head + `,"parts":[{"type":"image","mimeType":"image/png","size":3,"sha256":"` + okSHA + `","key":"../x"}]}`, want: "key"},
		{name: "negative size", give: head + `,"parts":[{"type":"image","mimeType":"image/png","size":-1,"sha256":"` + okSHA + `"}]}`, want: "size"},
		{name: "link with bytes", give: head + `,"parts":[{"type":"resource_link","uri":"u","name":"n","size":3}]}`, want: "no size"},
		{name: "link without name", give: head + `,"parts":[{"type":"resource_link","uri":"u"}]}`, want: "name"},
		{name: "inline text on an image", give: head + `,"parts":[{"type":"image","mimeType":"image/png","size":3,"sha256":"` + okSHA + `","text":"abc"}]}`, want: "text"},
		{name: "long inline text", give: head + `,"parts":[{"type":"text","size":600,"sha256":"` + okSHA + `","text":"` + strings.Repeat("a", 600) + `"}]}`, want: "text"},
		{name: "too many", give: head + `,"parts":[` + strings.Repeat(image+",", toolcore.MaxParts) + image + `]}`, want: "more than"},
		{name: "too large together", give: head + `,"parts":[` + strings.Repeat(`{"type":"image","mimeType":"image/png","size":67108864,"sha256":"`+okSHA+`","key":"k"},`, 2) + image + `]}`, want: "bytes together"},
		{name: "control in uri", give: head + `,"parts":[{"type":"resource_link","uri":"a\nb","name":"n"}]}`, want: "control"},
		{name: "on an error result", give: `{"id":"tool-result-c","role":"toolResult","toolCallId":"c","toolName":"t","content":"{\"error\":{\"code\":\"TOOL_EXECUTION_FAILED\",\"message\":\"m\"}}","isError":true,"parts":[` + image + `]}`, want: "error result"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r toolcore.Result
			err := json.Unmarshal([]byte(tt.give), &r)
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, "c", r.ToolCallID())
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.True(t, r.IsZero())
		})
	}
}

// A Rich output completes in process to its Output's content and a claim of each part without a
// key; the bytes never reach the result, whatever their size.
func TestCompleteRich(t *testing.T) {
	call := contractCall(t, "report", `{}`, "call-rich")
	big := bytes.Repeat([]byte{0xAB}, 20<<20)

	res, err := toolcore.Complete(call, toolcore.Rich{
		Output: toolcore.Text("a 20 MB report and a chart"),
		Parts:  []toolcore.Part{toolcore.Resource("file:///report.bin", "application/octet-stream", big), toolcore.TextPart("short")},
	}, nil)

	require.NoError(t, err)
	assert.Equal(t, "a 20 MB report and a chart", res.Content())
	parts := res.Parts()
	require.Len(t, parts, 2)
	assert.Equal(t, toolcore.PartClaim{Type: toolcore.PartResource, MimeType: "application/octet-stream", Size: 20 << 20, SHA256: sum(big), URI: "file:///report.bin"}, parts[0])
	assert.False(t, parts[0].Stored())
	assert.Equal(t, "short", parts[1].Text)
	data, err := res.MarshalJSON()
	require.NoError(t, err)
	assert.Less(t, len(data), 4096)
	require.NoError(t, parts[0].CheckPartData(big))
	require.ErrorIs(t, parts[0].CheckPartData(big[1:]), toolcore.ErrPartDigest)

	// A pointer to a Rich is a Rich; its output is serialized like any output.
	res, err = toolcore.Complete(call, &toolcore.Rich{Output: map[string]int{"rows": 3}}, nil)
	require.NoError(t, err)
	assert.Equal(t, `{"rows":3}`, res.Content())
	assert.Nil(t, res.Parts())
}

// Invalid parts make the result TOOL_OUTPUT_SERIALIZATION_FAILED naming the part.
func TestCompleteRichRejectsInvalidParts(t *testing.T) {
	call := contractCall(t, "report", `{}`, "call-bad")
	tests := []struct {
		name string
		give []toolcore.Part
		want string
	}{
		{name: "unknown type", give: []toolcore.Part{{Type: "video"}}, want: "parts[0]: part type"},
		{name: "image without mime", give: []toolcore.Part{toolcore.Image("", []byte("x"))}, want: "parts[0]: image part needs a mimeType"},
		{name: "resource without uri", give: []toolcore.Part{toolcore.TextPart("ok"), toolcore.Resource("", "", nil)}, want: "parts[1]: resource part needs a uri"},
		{name: "link with data", give: []toolcore.Part{{Type: toolcore.PartResourceLink, URI: "u", Name: "n", Data: []byte{}}}, want: "carries no data"},
		{name: "text not UTF-8", give: []toolcore.Part{toolcore.TextPart("\xff")}, want: "UTF-8"},
		{name: "too many", give: make([]toolcore.Part, toolcore.MaxParts+1), want: "parts exceed"},
		{name: "too large together", give: []toolcore.Part{
			toolcore.Image("image/png", make([]byte, toolcore.MaxPartBytes)),
			toolcore.Image("image/png", make([]byte, toolcore.MaxPartBytes)),
			toolcore.TextPart(strings.Repeat("x", 1000)),
		}, want: "parts[2]: the parts exceed 134217728 bytes together"},
		{name: "long uri", give: []toolcore.Part{toolcore.ResourceLink(strings.Repeat("u", toolcore.MaxPartURIBytes+1), "n", "")}, want: "uri exceeds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := toolcore.Complete(call, toolcore.Rich{Output: "x", Parts: tt.give}, nil)

			require.NoError(t, err)
			assert.Equal(t, toolcore.CodeToolOutputSerializationFailed, res.ErrorCode())
			assert.Contains(t, res.ErrorMessage(), tt.want)
			assert.Nil(t, res.Parts())
		})
	}
}

// LinkResult (the workflow's side) keeps only valid claims, at most MaxParts, and none on an
// error result.
func TestLinkResultKeepsValidClaims(t *testing.T) {
	call := contractCall(t, "t", `{}`, "c")
	good := toolcore.ClaimPart(toolcore.Audio("audio/wav", []byte("RIFF")), "key-1")
	bad := good
	bad.Key = "no/slashes"
	many := make([]toolcore.PartClaim, toolcore.MaxParts+5)
	for i := range many {
		many[i] = good
	}

	assert.Equal(t, []toolcore.PartClaim{good}, toolcore.LinkResult(call, "ok", false, []toolcore.PartClaim{bad, good}).Parts())
	assert.Len(t, toolcore.LinkResult(call, "ok", false, many).Parts(), toolcore.MaxParts)
	assert.Nil(t, toolcore.LinkResult(call, `{"error":{"code":"TOOL_EXECUTION_FAILED","message":"m"}}`, true, []toolcore.PartClaim{good}).Parts())
	// Parts returns a copy: the result cannot be changed through it.
	r := toolcore.LinkResult(call, "ok", false, []toolcore.PartClaim{good})
	r.Parts()[0].Key = "changed"
	assert.Equal(t, "key-1", r.Parts()[0].Key)
}

// The claim of a 20 MB part keeps the whole result message under 4 KiB, even with a full content
// and the longest uri and name.
func TestContractPartClaimIsSmall(t *testing.T) {
	call := contractCall(t, "t", `{}`, strings.Repeat("i", toolcore.MaxIDBytes))
	p := toolcore.Resource(strings.Repeat("u", toolcore.MaxPartURIBytes), "application/octet-stream", make([]byte, 20<<20))
	p.Name = strings.Repeat("n", toolcore.MaxPartNameBytes)
	res := toolcore.LinkResult(call, "done", false, []toolcore.PartClaim{toolcore.ClaimPart(p, strings.Repeat("k", toolcore.MaxPartKeyBytes))})

	data, err := res.MarshalJSON()

	require.NoError(t, err)
	require.Len(t, res.Parts(), 1)
	assert.Less(t, len(data), 4096)
}
