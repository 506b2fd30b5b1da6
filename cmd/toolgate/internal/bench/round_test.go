package bench

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// completeRounds is a structurally complete rounds phase of n runs per shape.
func completeRounds(n int) Rounds {
	r := Rounds{Repeats: n, ParallelRatio: 1.3, SequentialRatio: 6, ChildPerCallMs: 40, ActivityPerCallMs: 10, ChildRoundRatio: 2.5,
		InlineRatio: 1.05, InlineRoundRatio: 1.15, InlineCPURatio: 0.98, InlineRoundCPURatio: 1.25}
	for i, s := range roundShapes() {
		p50 := float64(10 * (i + 1))
		r.Shapes = append(r.Shapes, RoundShape{Shape: s, Calls: shapeCalls(s), RatioP50: p50 / 10,
			Latencies: Latencies{N: n, P50Ms: p50, P95Ms: p50, P99Ms: p50, MeanMs: p50, MinMs: p50, MaxMs: p50}})
	}
	return r
}

func completeSchema() Schema {
	return Schema{
		Accepted:   Op{Iterations: 10, NsPerCall: 30000, AllocsPerCall: 150, BytesPerCall: 7000},
		Rejected:   Op{Iterations: 10, NsPerCall: 11000, AllocsPerCall: 90, BytesPerCall: 4000},
		DecodeOnly: Op{Iterations: 10, NsPerCall: 13000, AllocsPerCall: 40, BytesPerCall: 2800},
		CheckUs:    17,
	}
}

func TestCheckRoundsAndSchema(t *testing.T) {
	r := completeReport()
	require.NoError(t, r.Check())

	r.Rounds.Shapes = r.Rounds.Shapes[1:]
	assert.ErrorContains(t, r.Check(), "rounds: incomplete")
	r = completeReport()
	r.Rounds.Shapes[3].N = 1
	assert.ErrorContains(t, r.Check(), `rounds: shape "`+ShapeAgentEmpty+`"`)
	r = completeReport()
	r.Schema.DecodeOnly = Op{}
	assert.ErrorContains(t, r.Check(), "schema: incomplete")
}

func TestWriteTextRoundsAndSchema(t *testing.T) {
	var b strings.Builder
	require.NoError(t, completeReport().WriteText(&b))
	out := b.String()
	assert.Contains(t, out, ShapeAgentChildRound)
	assert.Contains(t, out, "a round of 8 in parallel takes 1.30x one call (goal <= 1.50: meets); 8 sequential take 6.00x")
	assert.Contains(t, out, "one call adds 40.00ms as a child workflow, 10.00ms as a plain activity")
	assert.Contains(t, out, ShapeAgentInlineRound)
	assert.Contains(t, out, "inline against plain activities (goal <= 1.20 each): one call 1.05x wall, 0.98x CPU (meets); a round of 8 1.15x wall, 1.25x CPU (MISSES)")
	assert.Contains(t, out, "the schema check adds 17.0 us per call (goal < 20 us: meets)")
}

func TestShapeCalls(t *testing.T) {
	calls := map[string]int{}
	for _, s := range roundShapes() {
		calls[s] = shapeCalls(s)
	}
	assert.Equal(t, map[string]int{
		ShapeClientOne: 1, ShapeClientParallel: 8, ShapeClientSequential: 8, ShapeAgentEmpty: 0,
		ShapeAgentChildOne: 1, ShapeAgentChildRound: 8, ShapeAgentActOne: 1, ShapeAgentActRound: 8,
		ShapeAgentInlineOne: 1, ShapeAgentInlineRound: 8,
	}, calls)
}

func TestSchemaFuncsValidate(t *testing.T) {
	accepted, rejected, decodeOnly, err := SchemaFuncs()
	require.NoError(t, err)
	for _, fn := range []func() error{accepted, rejected, decodeOnly} {
		assert.NoError(t, fn())
	}
}

func TestSchemaPhaseMeasuresWallAndCPU(t *testing.T) {
	s, err := schemaPhase(20 * time.Millisecond)
	require.NoError(t, err)
	require.NoError(t, Report{Schema: s}.checkSchema())
	if runtime.GOOS == "linux" {
		assert.Positive(t, s.AcceptedCPUUs)
		assert.Positive(t, s.DecodeOnlyCPUUs)
		assert.Equal(t, round(s.AcceptedCPUUs-s.DecodeOnlyCPUUs, 2), s.CheckUs, "the check's cost is taken in CPU time")
	}
}
