package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/toolgate/toolgate/internal/safetext"
)

// writeJSON writes v as one line of JSON, without escaping <, > and & (stdout is not HTML).
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	// Model text inside strings is escaped as JSON \u escapes: the same value, safe on a terminal.
	data, _ := safetext.JSON(buf.Bytes())
	_, err := w.Write(data)
	return err
}

// writeLines prints "key value" lines with each value escaped for a terminal (safetext) and,
// when anything was escaped, a last line that says how many characters.
func writeLines(w io.Writer, lines [][2]string) error {
	total := 0
	for _, l := range lines {
		v, n := safetext.Escape(l[1])
		total += n
		if _, err := fmt.Fprintf(w, "%-9s %s\n", l[0], v); err != nil {
			return err
		}
	}
	if total > 0 {
		if _, err := fmt.Fprintf(w, "%-9s %s\n", "note", safetext.Note(total)); err != nil {
			return err
		}
	}
	return nil
}
