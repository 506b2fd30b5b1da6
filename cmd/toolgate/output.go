package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// writeJSON writes v as one line of JSON, without escaping <, > and & (stdout is not HTML).
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}
