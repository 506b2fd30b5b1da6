package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSummarize(t *testing.T) {
	ms := func(vs ...int) []time.Duration {
		d := make([]time.Duration, len(vs))
		for i, v := range vs {
			d[i] = time.Duration(v) * time.Millisecond
		}
		return d
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100..1, unsorted
	}
	tests := []struct {
		name string
		give []time.Duration
		want Latencies
	}{
		{name: "empty", give: nil, want: Latencies{}},
		{name: "one", give: ms(7), want: Latencies{N: 1, P50Ms: 7, P95Ms: 7, P99Ms: 7, MeanMs: 7, MinMs: 7, MaxMs: 7}},
		{name: "four unsorted", give: ms(4, 1, 3, 2), want: Latencies{N: 4, P50Ms: 2, P95Ms: 4, P99Ms: 4, MeanMs: 2.5, MinMs: 1, MaxMs: 4}},
		{name: "hundred", give: ms(hundred...), want: Latencies{N: 100, P50Ms: 50, P95Ms: 95, P99Ms: 99, MeanMs: 50.5, MinMs: 1, MaxMs: 100}},
		{name: "sub-millisecond", give: []time.Duration{1500 * time.Microsecond, 2500 * time.Microsecond},
			want: Latencies{N: 2, P50Ms: 1.5, P95Ms: 2.5, P99Ms: 2.5, MeanMs: 2, MinMs: 1.5, MaxMs: 2.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, summarize(tt.give))
		})
	}
}

func TestSummarizeKeepsInput(t *testing.T) {
	give := []time.Duration{3, 1, 2}
	summarize(give)
	assert.Equal(t, []time.Duration{3, 1, 2}, give)
}

func TestRatio(t *testing.T) {
	tests := []struct {
		name string
		a, b float64
		want float64
	}{
		{name: "equal", a: 2, b: 2, want: 1},
		{name: "rounded to 3 decimals", a: 1, b: 3, want: 0.333},
		{name: "zero denominator", a: 1, b: 0, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ratio(tt.a, tt.b))
		})
	}
}
