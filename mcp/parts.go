package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/blobs"
	"github.com/toolgate/toolgate/toolcore"
)

// partLoadTimeout bounds reading one result's parts from the part store.
const partLoadTimeout = time.Minute

// partContents maps a result's parts (toolcore.Result.Parts) to MCP content, after the
// model-facing text: text as text, image and audio as base64 data with their mimeType, an
// embedded resource as a resource (its text when its mimeType is textual and its bytes UTF-8, else
// a base64 blob), a link as resource_link. The bytes come from store, checked against their claim
// (blobs.Load); a part that cannot be read becomes a text saying so, naming its claim, never other
// bytes.
func partContents(store blobs.Store, parts []toolcore.PartClaim) []sdk.Content {
	if len(parts) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), partLoadTimeout)
	defer cancel()
	out := make([]sdk.Content, 0, len(parts))
	for i, c := range parts {
		if c.Type == toolcore.PartResourceLink {
			out = append(out, &sdk.ResourceLink{URI: c.URI, Name: c.Name, MIMEType: c.MimeType})
			continue
		}
		data, err := blobs.Load(ctx, store, c)
		if err != nil {
			out = append(out, &sdk.TextContent{Text: fmt.Sprintf("[part %d: %s %s of %d bytes, sha256 %s, is not available: %s]",
				i, c.Type, c.MimeType, c.Size, c.SHA256, unavailable(store, err))})
			continue
		}
		switch c.Type {
		case toolcore.PartText:
			out = append(out, &sdk.TextContent{Text: string(data)})
		case toolcore.PartImage:
			out = append(out, &sdk.ImageContent{Data: data, MIMEType: c.MimeType})
		case toolcore.PartAudio:
			out = append(out, &sdk.AudioContent{Data: data, MIMEType: c.MimeType})
		case toolcore.PartResource:
			res := &sdk.ResourceContents{URI: c.URI, MIMEType: c.MimeType}
			if textual(c.MimeType) && utf8.Valid(data) {
				res.Text = string(data)
			} else {
				res.Blob = data
			}
			out = append(out, &sdk.EmbeddedResource{Resource: res})
		}
	}
	return out
}

// unavailable says why a part could not be read, in fixed words: the store's own error may name
// its files or database, which are not the client's to see.
func unavailable(store blobs.Store, err error) string {
	switch {
	case errors.Is(err, blobs.ErrNotKept):
		return "its bytes were not kept"
	case store == nil:
		return "no part store"
	case errors.Is(err, blobs.ErrNotFound):
		return "not in the part store (swept after retention, or another store)"
	case errors.Is(err, toolcore.ErrPartDigest):
		return "the stored bytes do not match the claim"
	default:
		return "the part store could not read it"
	}
}

// textual reports whether a resource of mimeType is text (text/*, JSON, XML, YAML).
func textual(mimeType string) bool {
	mt, _, _ := strings.Cut(mimeType, ";")
	mt = strings.TrimSpace(strings.ToLower(mt))
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json") ||
		mt == "application/xml" || strings.HasSuffix(mt, "+xml") || mt == "application/yaml"
}
