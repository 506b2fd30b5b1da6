package toolcore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// PartType is the content type of a result part, named as MCP names content types.
type PartType string

// The part types (MCP's content types).
const (
	// PartText is text beside the model-facing content (MCP "text").
	PartText PartType = "text"
	// PartImage is an image (MCP "image": base64 data and a mimeType).
	PartImage PartType = "image"
	// PartAudio is audio (MCP "audio").
	PartAudio PartType = "audio"
	// PartResource is an embedded resource: bytes with a URI (MCP "resource").
	PartResource PartType = "resource"
	// PartResourceLink is a link to a resource the tool does not return (MCP "resource_link"):
	// no bytes, only a URI and a name.
	PartResourceLink PartType = "resource_link"
)

// Bounds of result parts (contract section 20).
const (
	// MaxParts bounds the parts of one result.
	MaxParts = 32
	// MaxPartBytes bounds the bytes of one part.
	MaxPartBytes = 64 << 20
	// MaxTotalPartBytes bounds the bytes of all the parts of one result, so a reader (the MCP
	// server, the CLI) never holds more than this for one result.
	MaxTotalPartBytes = 128 << 20
	// MaxInlineTextBytes is the largest text part whose text its claim carries in history;
	// a longer one is stored like any other part.
	MaxInlineTextBytes = 512
	// MaxPartMimeTypeBytes bounds a part's mimeType.
	MaxPartMimeTypeBytes = 127
	// MaxPartURIBytes bounds a part's uri.
	MaxPartURIBytes = 2048
	// MaxPartNameBytes bounds a part's name.
	MaxPartNameBytes = 256
	// MaxPartKeyBytes bounds the key a part store returns.
	MaxPartKeyBytes = 128
)

// Part is one piece of a rich result beside the model-facing content: text, an image, audio, an
// embedded resource or a resource link. Build one with TextPart, Image, Audio, Resource or
// ResourceLink and return it in a Rich output.
type Part struct {
	// Type is the content type. Required.
	Type PartType
	// MimeType is the media type of the bytes (image/png, audio/wav, text/csv). Required for
	// images and audio; optional otherwise.
	MimeType string
	// Data is the part's bytes; nil for a resource link.
	Data []byte
	// URI names a resource (PartResource, PartResourceLink). Required for those.
	URI string
	// Name is a resource link's name. Required for PartResourceLink; optional for a resource.
	Name string
}

// TextPart is a text part (MCP "text" content) beside the model-facing content.
func TextPart(text string) Part {
	return Part{Type: PartText, MimeType: "text/plain", Data: []byte(text)}
}

// Image is an image part of mimeType (image/png, image/jpeg, ...).
func Image(mimeType string, data []byte) Part {
	return Part{Type: PartImage, MimeType: mimeType, Data: data}
}

// Audio is an audio part of mimeType (audio/wav, audio/mpeg, ...).
func Audio(mimeType string, data []byte) Part {
	return Part{Type: PartAudio, MimeType: mimeType, Data: data}
}

// Resource is an embedded resource: data named by uri, of mimeType (optional).
func Resource(uri, mimeType string, data []byte) Part {
	return Part{Type: PartResource, URI: uri, MimeType: mimeType, Data: data}
}

// ResourceLink is a link to the resource at uri, named name, of mimeType (optional): the client
// reads it itself; no bytes are kept.
func ResourceLink(uri, name, mimeType string) Part {
	return Part{Type: PartResourceLink, URI: uri, Name: name, MimeType: mimeType}
}

// Rich is a tool output with parts: Output is the model-facing content, completed like any other
// output (serialized and capped, a Text as it is), and Parts are kept out of history by the
// worker's part store, the result recording a PartClaim of each. Only the output itself is read
// this way: a Rich inside a map, slice or struct is serialized like any other struct.
type Rich struct {
	// Output is what the model reads (the result's content). Optional: default null.
	Output any
	// Parts are the result's parts, in order. At most MaxParts.
	Parts []Part
}

// PartClaim is what history keeps of a part: its type, size and SHA-256, and the key under which
// the part store keeps its bytes; never the bytes themselves, except the text of a text part of at
// most MaxInlineTextBytes (then Key is empty). A resource link has no bytes: only uri, name and
// mimeType. It encodes as {"type","mimeType","size","sha256","key","uri","name","text"}, empty
// fields omitted.
type PartClaim struct {
	// Type is the part's content type.
	Type PartType `json:"type"`
	// MimeType is the part's media type, if any.
	MimeType string `json:"mimeType,omitempty"`
	// Size is the byte length of the part's data.
	Size int64 `json:"size,omitempty"`
	// SHA256 is the lowercase hex SHA-256 of the part's data; a reader checks it.
	SHA256 string `json:"sha256,omitempty"`
	// Key names the bytes in the part store; empty for inline text and resource links.
	Key string `json:"key,omitempty"`
	// URI is a resource's or link's URI.
	URI string `json:"uri,omitempty"`
	// Name is a link's (or resource's) name.
	Name string `json:"name,omitempty"`
	// Text is the text of a short text part (at most MaxInlineTextBytes), kept inline.
	Text string `json:"text,omitempty"`
}

// Stored reports whether the claim's bytes are in a part store (Key set). A claim of a part with
// bytes that is neither stored nor inline was made in process (toolcore.Execute keeps no parts):
// its bytes are gone.
func (c PartClaim) Stored() bool { return c.Key != "" }

// ErrPartDigest is the error of CheckPartData when the bytes are not the claim's.
var ErrPartDigest = errors.New("part bytes do not match their claim (size or sha256)")

// CheckPartData reports whether data is the claimed part's bytes (size and SHA-256): an error
// wrapping ErrPartDigest when not.
func (c PartClaim) CheckPartData(data []byte) error {
	sum := sha256.Sum256(data)
	if int64(len(data)) != c.Size || hex.EncodeToString(sum[:]) != c.SHA256 {
		return fmt.Errorf("%s part: %w", c.Type, ErrPartDigest)
	}
	return nil
}

// ValidatePart checks a part a tool returned against the bounds: a known type, the fields its
// type requires, data of at most MaxPartBytes (none for a link), and mimeType, uri and name
// within their bounds, valid UTF-8 without control characters.
func ValidatePart(p Part) error {
	switch p.Type {
	case PartText, PartImage, PartAudio, PartResource, PartResourceLink:
	default:
		return fmt.Errorf("part type %s is not one of text, image, audio, resource, resource_link", quoteShort(string(p.Type)))
	}
	if err := checkPartString("mimeType", p.MimeType, MaxPartMimeTypeBytes); err != nil {
		return err
	}
	if err := checkPartString("uri", p.URI, MaxPartURIBytes); err != nil {
		return err
	}
	if err := checkPartString("name", p.Name, MaxPartNameBytes); err != nil {
		return err
	}
	switch {
	case len(p.Data) > MaxPartBytes:
		return fmt.Errorf("%s part of %d bytes exceeds %d bytes", p.Type, len(p.Data), MaxPartBytes)
	case (p.Type == PartImage || p.Type == PartAudio) && !strings.HasPrefix(p.MimeType, string(p.Type)+"/"):
		return fmt.Errorf("%s part needs a mimeType %s/..., not %s", p.Type, p.Type, quoteShort(p.MimeType))
	case p.Type == PartText && !utf8.Valid(p.Data):
		return errors.New("text part is not valid UTF-8")
	case (p.Type == PartResource || p.Type == PartResourceLink) && p.URI == "":
		return fmt.Errorf("%s part needs a uri", p.Type)
	case p.Type == PartResourceLink && p.Name == "":
		return errors.New("resource_link part needs a name")
	case p.Type == PartResourceLink && p.Data != nil:
		return errors.New("resource_link part carries no data")
	}
	return nil
}

// checkPartString bounds a part's string field: at most limit bytes of valid UTF-8 without
// control characters.
func checkPartString(field, s string, limit int) error {
	if len(s) > limit {
		return fmt.Errorf("part %s exceeds %d bytes", field, limit)
	}
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r < 0xa0) }) {
		return fmt.Errorf("part %s must be UTF-8 without control characters", field)
	}
	return nil
}

// ClaimPart is the claim of p whose bytes the part store keeps under key ("" for a part kept
// inline or a link). A text part of at most MaxInlineTextBytes is claimed inline whatever key
// says; p must be valid (ValidatePart).
func ClaimPart(p Part, key string) PartClaim {
	c := PartClaim{Type: p.Type, MimeType: p.MimeType, URI: p.URI, Name: p.Name}
	if p.Type == PartResourceLink {
		return c
	}
	sum := sha256.Sum256(p.Data)
	c.Size, c.SHA256 = int64(len(p.Data)), hex.EncodeToString(sum[:])
	if PartInline(p) {
		c.Text = string(p.Data)
		return c
	}
	c.Key = key
	return c
}

// PartInline reports whether p's claim carries it whole (a short text part, a link): nothing to
// store.
func PartInline(p Part) bool {
	return p.Type == PartResourceLink || (p.Type == PartText && len(p.Data) <= MaxInlineTextBytes)
}

// validateClaim checks a claim read back from the wire: the bounds of ValidatePart, a hex
// SHA-256 for every part with bytes, a key of at most MaxPartKeyBytes of [A-Za-z0-9._-], inline
// text only for short text parts.
func validateClaim(c PartClaim) error {
	if err := ValidatePart(Part{Type: c.Type, MimeType: c.MimeType, URI: c.URI, Name: c.Name}); err != nil {
		return err
	}
	switch {
	case c.Type == PartResourceLink && (c.Size != 0 || c.SHA256 != "" || c.Key != "" || c.Text != ""):
		return errors.New("resource_link claim carries no size, sha256, key or text")
	case c.Type == PartResourceLink:
		return nil
	case c.Size < 0 || c.Size > MaxPartBytes:
		return fmt.Errorf("%s claim size %d out of range", c.Type, c.Size)
	case len(c.SHA256) != 2*sha256.Size || strings.Trim(c.SHA256, "0123456789abcdef") != "":
		return fmt.Errorf("%s claim needs a lowercase hex sha256", c.Type)
	case len(c.Key) > MaxPartKeyBytes || strings.Trim(c.Key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != "":
		return fmt.Errorf("%s claim key must be at most %d bytes of A-Z a-z 0-9 . _ -", c.Type, MaxPartKeyBytes)
	case c.Text != "" && (c.Type != PartText || len(c.Text) > MaxInlineTextBytes || c.Key != ""):
		return errors.New("only a text claim of at most MaxInlineTextBytes carries its text, without a key")
	}
	return nil
}

// LinkResult rebuilds a result with parts from what crossed a boundary (activity to workflow):
// LinkContent's content, and the claims that pass the wire checks (at most MaxParts and
// MaxTotalPartBytes; an invalid one is dropped). An error result keeps no parts. The same inputs give the same result: it is
// safe in workflow code.
func LinkResult(call ToolCall, content string, isError bool, parts []PartClaim) Result {
	r := LinkContent(call, content, isError)
	if isError {
		return r
	}
	var total int64
	for _, c := range parts {
		if len(r.parts) == MaxParts || total+c.Size > MaxTotalPartBytes {
			break
		}
		if validateClaim(c) == nil {
			r.parts = append(r.parts, c)
			total += c.Size
		}
	}
	return r
}

// Parts returns a copy of the result's part claims; nil when it has none.
func (r Result) Parts() []PartClaim {
	if len(r.parts) == 0 {
		return nil
	}
	return append([]PartClaim(nil), r.parts...)
}

// decodeClaims strictly decodes the "parts" member's canonical JSON: an array of 1 to MaxParts
// claim objects without unknown fields, each valid.
func decodeClaims(raw []byte) ([]PartClaim, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var claims []PartClaim
	if err := dec.Decode(&claims); err != nil {
		return nil, fmt.Errorf(`"parts": %w`, err)
	}
	switch {
	case len(claims) == 0:
		return nil, errors.New(`"parts" must not be empty (omit it)`)
	case len(claims) > MaxParts:
		return nil, fmt.Errorf(`"parts" holds more than %d claims`, MaxParts)
	}
	var total int64
	for i, c := range claims {
		if err := validateClaim(c); err != nil {
			return nil, fmt.Errorf(`"parts"[%d]: %w`, i, err)
		}
		if total += c.Size; total > MaxTotalPartBytes {
			return nil, fmt.Errorf(`"parts" claim more than %d bytes together`, MaxTotalPartBytes)
		}
	}
	return claims, nil
}

// ValidateParts checks the parts of a Rich output: at most MaxParts, each valid (ValidatePart),
// together at most MaxTotalPartBytes. The error names the part by its index.
func ValidateParts(parts []Part) error {
	if len(parts) > MaxParts {
		return fmt.Errorf("%d parts exceed %d", len(parts), MaxParts)
	}
	total := 0
	for i, p := range parts {
		if err := ValidatePart(p); err != nil {
			return fmt.Errorf("parts[%d]: %w", i, err)
		}
		if total += len(p.Data); total > MaxTotalPartBytes {
			return fmt.Errorf("parts[%d]: the parts exceed %d bytes together", i, MaxTotalPartBytes)
		}
	}
	return nil
}

// completeRich completes a Rich output in process: its Output as content, and a claim of each
// part without a key (no part store in process: the bytes are not kept, except inline text).
// Invalid parts make the result TOOL_OUTPUT_SERIALIZATION_FAILED.
func completeRich(call ToolCall, model any, parts []Part) Result {
	if err := ValidateParts(parts); err != nil {
		return ErrorResult(call, CodeToolOutputSerializationFailed, ErrorText(err))
	}
	res, _ := Complete(call, model, nil) // a nil error: Complete returns no error
	claims := make([]PartClaim, len(parts))
	for i, p := range parts {
		claims[i] = ClaimPart(p, "")
	}
	return LinkResult(call, res.Content(), res.IsError(), claims)
}

// SplitRich returns the model-facing output and the parts of a tool's output: for a Rich (or a
// non-nil *Rich) its Output and Parts and ok true; for anything else the output itself, no parts
// and ok false.
func SplitRich(output any) (model any, parts []Part, ok bool) {
	switch r := output.(type) {
	case Rich:
		return r.Output, r.Parts, true
	case *Rich:
		if r != nil {
			return r.Output, r.Parts, true
		}
	}
	return output, nil, false
}
