package mcp

import (
	"bufio"
	"errors"
	"io"
	"strings"
)

// SSEEvent is one server-sent event, as the raw-HTTP tests read it.
type SSEEvent struct {
	Name, ID, Retry, Data string
}

// ReadSSEEvent reads the next event of an SSE stream (data lines joined with newlines): io.EOF
// when the stream ended cleanly, the read's error when it broke. The one SSE reader of the tests,
// internal and external.
func ReadSSEEvent(r *bufio.Reader) (SSEEvent, error) {
	var e SSEEvent
	var data []string
	seen := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && line == "" {
				return e, io.EOF
			}
			return e, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if seen {
				e.Data = strings.Join(data, "\n")
				return e, nil
			}
			continue
		}
		seen = true
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			e.Name = value
		case "id":
			e.ID = value
		case "retry":
			e.Retry = value
		case "data":
			data = append(data, value)
		}
	}
}
