package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sample(n int, scale time.Duration) []time.Duration {
	d := make([]time.Duration, n)
	for i := range d {
		d[i] = time.Duration(10+i%7) * scale // 10..16 units, spread
	}
	return d
}

func TestQuantileRatioIntervals(t *testing.T) {
	same := quantileRatio(sample(300, time.Millisecond), sample(300, time.Millisecond), 50)
	assert.Equal(t, 1.0, same.Ratio)
	assert.LessOrEqual(t, same.Low, 1.0)
	assert.GreaterOrEqual(t, same.High, 1.0)

	double := quantileRatio(sample(300, 2*time.Millisecond), sample(300, time.Millisecond), 50)
	assert.Equal(t, 2.0, double.Ratio)
	assert.Greater(t, double.Low, 1.5, "a difference this large is told apart")

	again := quantileRatio(sample(300, 2*time.Millisecond), sample(300, time.Millisecond), 50)
	assert.Equal(t, double, again, "the same samples give the same interval")
}

func TestRateRatioResamplesBlockPairs(t *testing.T) {
	a := []blockRun{{calls: 40, took: time.Second}, {calls: 40, took: 2 * time.Second}}
	b := []blockRun{{calls: 20, took: time.Second}, {calls: 20, took: 2 * time.Second}}
	got := rateRatio(a, b)
	assert.Equal(t, 2.0, got.Ratio)
	assert.Equal(t, 2.0, got.Low)
	assert.Equal(t, 2.0, got.High)
}

func TestComparisonsPairLikeForLike(t *testing.T) {
	recs := func(scale time.Duration) []record {
		var rs []record
		for _, d := range sample(100, scale) {
			rs = append(rs, record{start: time.Unix(0, 0), end: time.Unix(0, 0).Add(d)})
		}
		return rs
	}
	records := map[string][]record{
		SubjectToolgate:      recs(time.Millisecond),
		SubjectBareEager:     recs(time.Millisecond),
		SubjectToolgateLocal: recs(time.Millisecond),
		// no bare: toolgate-local has no baseline in this run
	}
	blocks := map[string][]blockRun{
		SubjectToolgate:  {{calls: 10, took: time.Second}},
		SubjectBareEager: {{calls: 10, took: time.Second}},
	}
	got := comparisons(records, blocks)
	require.Len(t, got, 1)
	assert.Equal(t, SubjectToolgate, got[0].Subject)
	assert.Equal(t, SubjectBareEager, got[0].Baseline)
	assert.Equal(t, 1.0, got[0].P50.Ratio)
	assert.Equal(t, 1.0, got[0].Throughput.Ratio)
}
