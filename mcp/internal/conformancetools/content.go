package conformancetools

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"

	"github.com/toolgate/toolgate/toolcore"
)

// Parts of the content fixtures.
const (
	// EmbeddedResourceURI and EmbeddedResourceText are test_embedded_resource's resource.
	EmbeddedResourceURI  = "test://embedded-resource"
	EmbeddedResourceText = "This is an embedded resource content."
	// MixedResourceURI and MixedResourceJSON are test_multiple_content_types' resource.
	MixedResourceURI  = "test://mixed-content-resource"
	MixedResourceJSON = `{"test":"data","value":123}`
)

// RedPixelPNG returns a 1x1 red PNG, the suite's "minimal test image".
func RedPixelPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err) // encoding an in-memory image into a buffer does not fail
	}
	return b.Bytes()
}

// SilentWAV returns a WAV of 8 silent 8-bit mono samples at 8 kHz, the suite's "minimal test
// audio file".
func SilentWAV() []byte {
	const samples = 8
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) } // writes to a buffer do not fail
	b.WriteString("RIFF")
	le(uint32(36 + samples))
	b.WriteString("WAVEfmt ")
	le(uint32(16))   // fmt chunk size
	le(uint16(1))    // PCM
	le(uint16(1))    // mono
	le(uint32(8000)) // sample rate
	le(uint32(8000)) // byte rate
	le(uint16(1))    // block align
	le(uint16(8))    // bits per sample
	b.WriteString("data")
	le(uint32(samples))
	b.Write(bytes.Repeat([]byte{0x80}, samples)) // 8-bit PCM silence
	return b.Bytes()
}

// contentTools are the fixtures of the rich content scenarios (tools-call-image, -audio,
// -embedded-resource, -mixed-content): toolcore.Rich results whose parts MCP returns as their
// content types.
func contentTools() []toolcore.Tool {
	rich := func(name, description string, output string, parts func() []toolcore.Part) toolcore.Tool {
		return toolcore.MustDefine(toolcore.Definition[noArgs]{Name: name, Description: description,
			Execute: func(context.Context, noArgs) (any, error) {
				return toolcore.Rich{Output: toolcore.Text(output), Parts: parts()}, nil
			},
			Options: readOnly})
	}
	return []toolcore.Tool{
		rich("test_image_content", "Returns an image.", "A 1x1 red pixel.", func() []toolcore.Part {
			return []toolcore.Part{toolcore.Image("image/png", RedPixelPNG())}
		}),
		rich("test_audio_content", "Returns audio.", "A short silence.", func() []toolcore.Part {
			return []toolcore.Part{toolcore.Audio("audio/wav", SilentWAV())}
		}),
		rich("test_embedded_resource", "Returns an embedded resource.", "An embedded resource.", func() []toolcore.Part {
			return []toolcore.Part{toolcore.Resource(EmbeddedResourceURI, "text/plain", []byte(EmbeddedResourceText))}
		}),
		rich("test_multiple_content_types", "Returns text, an image and an embedded resource.", "Multiple content types test:", func() []toolcore.Part {
			return []toolcore.Part{
				toolcore.Image("image/png", RedPixelPNG()),
				toolcore.Resource(MixedResourceURI, "application/json", []byte(MixedResourceJSON)),
			}
		}),
	}
}
