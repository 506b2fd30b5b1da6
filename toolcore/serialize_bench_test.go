//go:build unix

package toolcore

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Run: go test -run '^$' -bench Serialize -benchmem -count 6 ./toolcore/ | tee new.txt
// and compare with go run golang.org/x/perf/cmd/benchstat@latest new.txt.
// The encoding_json sub-benchmarks run json.Marshal on the same value, for contrast.
// Besides wall time, each benchmark reports cpu-ns/op, the process CPU time per operation,
// which neighbours on a shared machine disturb much less.

// serLoop runs f in b.Loop and reports cpu-ns/op.
func serLoop(b *testing.B, f func() error) {
	b.ReportAllocs()
	start, n := serCPU(), 0
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(serCPU()-start)/float64(n), "cpu-ns/op")
}

// serCPU is the CPU time the process has used.
func serCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type serBenchHit struct {
	Title   string   `json:"title"`
	URL     string   `json:"url"`
	Snippet string   `json:"snippet"`
	Score   float64  `json:"score"`
	Rank    int      `json:"rank"`
	Tags    []string `json:"tags,omitempty"`
}

type serBenchSearch struct {
	Query     string            `json:"query"`
	Total     int64             `json:"total"`
	ElapsedMS float64           `json:"elapsedMs"`
	Truncated bool              `json:"truncated"`
	Hits      []serBenchHit     `json:"hits"`
	Facets    map[string]int    `json:"facets"`
	Next      *string           `json:"next,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// serBenchTypical is a typical structured tool output of about 1 KB of JSON.
func serBenchTypical() serBenchSearch {
	s := serBenchSearch{
		Query: "durable execution for agent tools", Total: 1284, ElapsedMS: 12.75,
		Facets: map[string]int{"docs": 812, "blog": 301, "forum": 171},
	}
	for i := range 4 {
		s.Hits = append(s.Hits, serBenchHit{
			Title:   fmt.Sprintf("Result %d: retries, timeouts and idempotency keys", i+1),
			URL:     fmt.Sprintf("https://example.com/articles/%d/durable-tools", 1000+i),
			Snippet: "Activities are retried with backoff; an idempotency key keeps repeated effects safe.",
			Score:   0.98 - float64(i)*0.0731,
			Rank:    i + 1,
			Tags:    []string{"temporal", "agents"},
		})
	}
	return s
}

// serBenchTypicalMap is serBenchTypical as generic maps, the other shape tools return.
func serBenchTypicalMap() map[string]any {
	b, err := json.Marshal(serBenchTypical())
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	return m
}

func BenchmarkSerializeTypical(b *testing.B) {
	for _, in := range []struct {
		name string
		v    any
	}{
		{"struct", serBenchTypical()},
		{"map", serBenchTypicalMap()},
	} {
		want, err := json.Marshal(in.v)
		if err != nil {
			b.Fatal(err)
		}
		got, err := Serialize(in.v)
		if err != nil || strings.HasSuffix(got, TruncationMarker) {
			b.Fatalf("typical output must serialize whole: %v", err)
		}
		b.Run(in.name+"/toolcore", func(b *testing.B) {
			b.SetBytes(int64(len(got)))
			serLoop(b, func() error { _, err := Serialize(in.v); return err })
		})
		b.Run(in.name+"/encoding_json", func(b *testing.B) {
			b.SetBytes(int64(len(want)))
			serLoop(b, func() error { _, err := json.Marshal(in.v); return err })
		})
	}
}

// serBenchHuge are inputs far beyond the budgets, and a 4 KB one that fits them.
var serBenchHuge = sync.OnceValue(func() []struct {
	name string
	v    any
} {
	small := make(map[string]string, 20)
	for i := range 20 {
		small[fmt.Sprintf("field%02d", i)] = strings.Repeat(string(rune('a'+i)), 180)
	}
	return []struct {
		name string
		v    any
	}{
		{"4KB", small},
		{"string-8M", strings.Repeat("x", 8_000_000)},
		{"map-1M", serMillionMap()},
		{"chain-100k", serDeepChain(100_000)},
		{"slice-1M", serInts(1_000_000)},
		{"bigint-1Mbit", new(big.Int).Lsh(big.NewInt(3), 1_000_000)},
	}
})

func BenchmarkSerializeHuge(b *testing.B) {
	for _, in := range serBenchHuge() {
		b.Run(in.name+"/toolcore", func(b *testing.B) {
			serLoop(b, func() error { _, err := Serialize(in.v); return err })
		})
		b.Run(in.name+"/encoding_json", func(b *testing.B) {
			serLoop(b, func() error { _, err := json.Marshal(in.v); return err })
		})
	}
}
