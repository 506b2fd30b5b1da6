package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// at is t0 plus ms milliseconds.
func at(ms int) time.Time { return time.Unix(1000, 0).Add(time.Duration(ms) * time.Millisecond) }

func TestSplitCallEagerStartAndActivity(t *testing.T) {
	r := record{workflowID: "wf-1", start: at(0), end: at(20)}
	spans := []rpcSpan{
		{kind: rpcPollWFT, workflowID: "wf-0", start: at(-50), end: at(-40)}, // another call's
		{kind: rpcRespondAct, start: at(-5), end: at(-3)},                    // the previous call's
		{kind: rpcStart, workflowID: "wf-1", start: at(1), end: at(3)},
		{kind: rpcRespondWFT, start: at(4), end: at(6)}, // hands over the eager activity
		{kind: rpcRespondAct, start: at(7), end: at(9)},
		{kind: rpcPollWFT, workflowID: "wf-1", start: at(-100), end: at(11)},
		{kind: rpcRespondWFT, start: at(12), end: at(15)},
	}
	segs, names, ok := splitCall(r, indexSpans(spans))
	require.True(t, ok)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	assert.Equal(t, map[string]time.Duration{
		rpcSegCaller:           ms(1),
		rpcSegStart:            ms(2),
		"worker: wft1":         ms(1),
		"wft1 completion RPC":  ms(2),
		rpcSegActWorker:        ms(1),
		rpcSegCompleteAct:      ms(2),
		"wft2 dispatch (poll)": ms(2),
		"worker: wft2":         ms(1),
		"wft2 completion RPC":  ms(3),
		rpcSegResult:           ms(5),
	}, segs)
	assert.Equal(t, rpcSegCaller, names[0])
	assert.Equal(t, rpcSegResult, names[len(names)-1])
	var sum time.Duration
	for _, d := range segs {
		sum += d
	}
	assert.Equal(t, r.took(), sum, "the segments add up to the call")
}

func TestSplitCallPolledStartAndActivity(t *testing.T) {
	r := record{workflowID: "wf-2", start: at(0), end: at(30)}
	spans := []rpcSpan{
		{kind: rpcStart, workflowID: "wf-2", start: at(0), end: at(2)},
		{kind: rpcPollWFT, workflowID: "wf-2", start: at(-9), end: at(5)},
		{kind: rpcRespondWFT, start: at(6), end: at(8)},
		{kind: rpcPollAct, workflowID: "wf-2", start: at(-9), end: at(10)},
		{kind: rpcRespondAct, start: at(11), end: at(13)},
	}
	segs, _, ok := splitCall(r, indexSpans(spans))
	require.True(t, ok)
	assert.Equal(t, 3*time.Millisecond, segs["wft1 dispatch (poll)"])
	assert.Equal(t, 2*time.Millisecond, segs[rpcSegActDispatch])
	assert.Equal(t, time.Millisecond, segs[rpcSegActWorker])
	assert.NotContains(t, segs, rpcSegOther)
}

func TestSplitCallWithoutItsStartIsLeftOut(t *testing.T) {
	r := record{workflowID: "wf-3", start: at(0), end: at(10)}
	_, _, ok := splitCall(r, indexSpans([]rpcSpan{{kind: rpcStart, workflowID: "wf-other", start: at(1), end: at(2)}}))
	assert.False(t, ok)
}
