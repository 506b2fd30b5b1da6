package mcp

import (
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/toolcore"
)

// output is the toolgate output of a remote result (modelOutput), and with
// MountOptions.KeepParts its images, audio, embedded resources and resource links as the call's
// parts (a toolcore.Rich), which the worker's part store keeps and toolgate's MCP server returns
// as their content types: a mounted server's picture reaches the caller's client, not only its
// size. An error result keeps no parts.
func (r *Remote) output(res *sdk.CallToolResult) (any, error) {
	out, err := r.modelOutput(res)
	if err != nil || !r.opts.KeepParts || res.IsError {
		return out, err
	}
	if parts := remoteParts(res.Content, r.liveSecrets()); len(parts) > 0 {
		return toolcore.Rich{Output: out, Parts: parts}, nil
	}
	return out, nil
}

// remoteParts are the parts of a remote result's contents: every image, audio clip, embedded
// resource (its text redacted of the connection's secrets) and resource link that is a valid part
// (toolcore.ValidatePart), in order, within toolcore.MaxParts and MaxTotalPartBytes; text
// contents are the model's content already. Others stay described in the content only.
func remoteParts(contents []sdk.Content, secrets *mountSecrets) []toolcore.Part {
	var parts []toolcore.Part
	total := 0
	for _, c := range contents {
		var p toolcore.Part
		switch c := c.(type) {
		case *sdk.ImageContent:
			p = toolcore.Image(c.MIMEType, c.Data)
		case *sdk.AudioContent:
			p = toolcore.Audio(c.MIMEType, c.Data)
		case *sdk.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			data := c.Resource.Blob
			if data == nil {
				data = []byte(secrets.redact(c.Resource.Text))
			}
			p = toolcore.Resource(c.Resource.URI, c.Resource.MIMEType, data)
		case *sdk.ResourceLink:
			p = toolcore.ResourceLink(c.URI, c.Name, c.MIMEType)
		default:
			continue
		}
		if len(parts) == toolcore.MaxParts || total+len(p.Data) > toolcore.MaxTotalPartBytes || toolcore.ValidatePart(p) != nil {
			continue
		}
		parts = append(parts, p)
		total += len(p.Data)
	}
	return parts
}
