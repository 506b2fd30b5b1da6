package bench

import (
	"math/rand/v2"
	"slices"
	"time"
)

// likeForLike pairs each subject with the baseline that differs from it only in what toolgate
// adds: toolgate and bare-eager both start eagerly, a Local call and bare both run one
// activity-shaped step in the worker.
var likeForLike = [][2]string{
	{SubjectToolgate, SubjectBareEager},
	{SubjectToolgateNoSA, SubjectBareEager},
	{SubjectToolgateLocal, SubjectBare},
	{SubjectToolgateNoEager, SubjectBare},
}

// Comparison is a subject against its like-for-like baseline, measured side by side, with 95%
// bootstrap intervals: an interval that holds 1.00 is no difference this run could tell apart.
type Comparison struct {
	Subject    string   `json:"subject"`
	Baseline   string   `json:"baseline"`
	P50        Interval `json:"p50"`
	P99        Interval `json:"p99"`
	Throughput Interval `json:"throughput"` // zero when throughput was not measured
}

// Interval is a ratio and its 95% bootstrap interval.
type Interval struct {
	Ratio float64 `json:"ratio"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
}

// bootstrapRounds is the number of resamples behind every interval. The generator is seeded with
// a constant: the same samples give the same intervals.
const bootstrapRounds = 2000

// comparisons compares the like-for-like pairs whose both subjects were measured.
func comparisons(records map[string][]record, blocks map[string][]blockRun) []Comparison {
	var out []Comparison
	for _, pair := range likeForLike {
		a, b := durations(records[pair[0]]), durations(records[pair[1]])
		if len(a) == 0 || len(b) == 0 {
			continue
		}
		c := Comparison{
			Subject:  pair[0],
			Baseline: pair[1],
			P50:      quantileRatio(a, b, 50),
			P99:      quantileRatio(a, b, 99),
		}
		if ta, tb := blocks[pair[0]], blocks[pair[1]]; len(ta) > 0 && len(ta) == len(tb) {
			c.Throughput = rateRatio(ta, tb)
		}
		out = append(out, c)
	}
	return out
}

func durations(rs []record) []time.Duration {
	d := make([]time.Duration, len(rs))
	for i, r := range rs {
		d[i] = r.took()
	}
	return d
}

// quantileRatio is the ratio of the p-th percentiles of a and b, with an interval from resampling
// each sample on its own.
func quantileRatio(a, b []time.Duration, p float64) Interval {
	q := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(percentile(s, p))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ra, rb := make([]time.Duration, len(a)), make([]time.Duration, len(b))
	ratios := make([]float64, bootstrapRounds)
	for i := range ratios {
		resample(rng, a, ra)
		resample(rng, b, rb)
		ratios[i] = q(ra) / q(rb)
	}
	return interval(q(a)/q(b), ratios)
}

func resample[T any](rng *rand.Rand, from, into []T) {
	for i := range into {
		into[i] = from[rng.IntN(len(from))]
	}
}

// rateRatio is the ratio of the call rates of a and b over their blocks, with an interval from
// resampling the block pairs: block i of a and block i of b ran one after the other.
func rateRatio(a, b []blockRun) Interval {
	rate := func(bs []blockRun, idx []int) float64 {
		var calls int
		var took time.Duration
		for _, i := range idx {
			calls += bs[i].calls
			took += bs[i].took
		}
		return float64(calls) / took.Seconds()
	}
	all := make([]int, len(a))
	for i := range all {
		all[i] = i
	}
	rng := rand.New(rand.NewPCG(1, 2))
	idx := make([]int, len(a))
	ratios := make([]float64, bootstrapRounds)
	for i := range ratios {
		resample(rng, all, idx)
		ratios[i] = rate(a, idx) / rate(b, idx)
	}
	return interval(rate(a, all)/rate(b, all), ratios)
}

// interval is point with the 2.5th and 97.5th percentiles of the resampled ratios.
func interval(point float64, ratios []float64) Interval {
	slices.Sort(ratios)
	at := func(p float64) float64 { return ratios[min(int(p*float64(len(ratios))), len(ratios)-1)] }
	return Interval{Ratio: round(point, 3), Low: round(at(0.025), 3), High: round(at(0.975), 3)}
}
