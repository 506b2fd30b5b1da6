package bench

import (
	"math"
	"slices"
	"time"
)

// Latencies summarizes a sample of durations, in milliseconds.
type Latencies struct {
	N      int     `json:"n"`
	P50Ms  float64 `json:"p50Ms"`
	P95Ms  float64 `json:"p95Ms"`
	P99Ms  float64 `json:"p99Ms"`
	MeanMs float64 `json:"meanMs"`
	MinMs  float64 `json:"minMs"`
	MaxMs  float64 `json:"maxMs"`
}

// summarize returns the nearest-rank percentiles, mean, min and max of d (zero for no samples).
func summarize(d []time.Duration) Latencies {
	if len(d) == 0 {
		return Latencies{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	var sum time.Duration
	for _, v := range s {
		sum += v
	}
	return Latencies{
		N:      len(s),
		P50Ms:  ms(percentile(s, 50)),
		P95Ms:  ms(percentile(s, 95)),
		P99Ms:  ms(percentile(s, 99)),
		MeanMs: ms(sum / time.Duration(len(s))),
		MinMs:  ms(s[0]),
		MaxMs:  ms(s[len(s)-1]),
	}
}

// percentile is the nearest-rank percentile p (0 < p <= 100) of sorted, which is not empty.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// ms is d in milliseconds, rounded to microseconds.
func ms(d time.Duration) float64 {
	return round(float64(d)/float64(time.Millisecond), 3)
}

// ratio is a/b rounded to 3 decimals, or 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return round(a/b, 3)
}

func round(v float64, decimals int) float64 {
	p := math.Pow10(decimals)
	return math.Round(v*p) / p
}
