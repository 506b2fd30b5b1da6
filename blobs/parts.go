package blobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/toolcore"
)

// Errors of Load.
var (
	// ErrNoBytes: the claim is a resource link, which has no bytes.
	ErrNoBytes = errors.New("a resource link has no bytes")
	// ErrNotKept: the claim has no key (a part of an in-process result, whose bytes were not
	// kept).
	ErrNotKept = errors.New("the part's bytes were not kept (no part store)")
)

// Save keeps p's bytes in s under a new key and returns its claim; a part its claim carries
// whole (a short text, a link: toolcore.PartInline) is not stored. p must be valid
// (toolcore.ValidatePart).
func Save(ctx context.Context, s Store, p toolcore.Part) (toolcore.PartClaim, error) {
	if toolcore.PartInline(p) {
		return toolcore.ClaimPart(p, ""), nil
	}
	key, err := NewKey()
	if err != nil {
		return toolcore.PartClaim{}, err
	}
	if err := s.Put(ctx, key, p.Data); err != nil {
		return toolcore.PartClaim{}, fmt.Errorf("store %s part: %w", p.Type, err)
	}
	return toolcore.ClaimPart(p, key), nil
}

// Load returns the bytes a claim names, checked against its size and SHA-256 (an error wrapping
// toolcore.ErrPartDigest when they differ): inline text from the claim itself, anything else
// from s (nil s: only inline parts load).
func Load(ctx context.Context, s Store, c toolcore.PartClaim) ([]byte, error) {
	var data []byte
	switch {
	case c.Type == toolcore.PartResourceLink:
		return nil, ErrNoBytes
	case c.Text != "" || (c.Type == toolcore.PartText && !c.Stored() && c.Size == 0):
		data = []byte(c.Text)
	case !c.Stored():
		return nil, ErrNotKept
	case s == nil:
		return nil, fmt.Errorf("load %s part: no part store", c.Type)
	default:
		var err error
		if data, err = s.Get(ctx, c.Key); err != nil {
			return nil, fmt.Errorf("load %s part: %w", c.Type, err)
		}
	}
	if err := c.CheckPartData(data); err != nil {
		return nil, err
	}
	return data, nil
}
