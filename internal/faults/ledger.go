package faults

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// Kind is the kind of a ledger record.
type Kind string

// Record kinds, in the order one attempt writes them.
const (
	// KindRun: an attempt started (written before anything else the tool does).
	KindRun Kind = "run"
	// KindEffect: the tool committed its side effect (written just before it returns a success).
	KindEffect Kind = "effect"
	// KindExit: the attempt returned, whatever the outcome.
	KindExit Kind = "exit"
)

// Record is one ledger line (JSON).
type Record struct {
	Kind    Kind   `json:"kind"`
	Call    string `json:"call"`
	Tool    string `json:"tool"`
	Attempt int    `json:"attempt"`
	Key     string `json:"key"`
	PID     int    `json:"pid"`
}

// Ledger appends records to a file shared by processes.
type Ledger struct {
	mu sync.Mutex
	f  *os.File
}

// OpenLedger opens (creating) path for appending. The file stays open until the process ends.
func OpenLedger(path string) (*Ledger, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	return &Ledger{f: f}, nil
}

// Append writes r as one line with one write(2): O_APPEND places it atomically after every line
// already written, by this process or another.
func (l *Ledger) Append(r Record) error {
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode ledger record: %w", err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("append to ledger: %w", err)
	}
	return nil
}

// ReadLedger returns the complete records of path, in file order; a last line without its newline
// (being written) is left out. A missing file has no records.
func ReadLedger(path string) ([]Record, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		data = data[:i+1]
	} else {
		data = nil
	}
	var records []Record
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("read ledger line %d: %w", n, err)
		}
		records = append(records, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	return records, nil
}

// Tally counts the records of each call by kind.
type Tally map[string]map[Kind]int

// Count tallies records.
func Count(records []Record) Tally {
	t := Tally{}
	for _, r := range records {
		if t[r.Call] == nil {
			t[r.Call] = map[Kind]int{}
		}
		t[r.Call][r.Kind]++
	}
	return t
}

// Of returns the number of records of kind for call.
func (t Tally) Of(call string, kind Kind) int { return t[call][kind] }
