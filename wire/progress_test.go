package wire_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/wire"
)

// A progress window's JSON has its latest report at the top level, so a reader of the older shape
// (a bare ProgressDetails) reads the latest report, and the older shape, in heartbeat details and
// results recorded before windows, decodes as an unnumbered window of one.
func TestProgressWindowShapes(t *testing.T) {
	w := wire.ProgressWindow{
		ProgressDetails: wire.ProgressDetails{Completed: 3, Total: 3, Message: "done"},
		Seq:             9,
		Earlier:         []wire.ProgressDetails{{Completed: 1, Total: 3}, {Completed: 2, Total: 3}},
	}
	b, err := json.Marshal(w)
	require.NoError(t, err)
	assert.JSONEq(t, `{"completed":3,"total":3,"message":"done","seq":9,"earlier":[{"completed":1,"total":3},{"completed":2,"total":3}]}`, string(b))
	assert.Equal(t, []wire.NumberedProgress{
		{Seq: 7, ProgressDetails: wire.ProgressDetails{Completed: 1, Total: 3}},
		{Seq: 8, ProgressDetails: wire.ProgressDetails{Completed: 2, Total: 3}},
		{Seq: 9, ProgressDetails: wire.ProgressDetails{Completed: 3, Total: 3, Message: "done"}},
	}, w.Reports())

	var old wire.ProgressDetails
	require.NoError(t, json.Unmarshal(b, &old))
	assert.Equal(t, w.ProgressDetails, old, "an older reader reads the latest report")

	var fromOld wire.ProgressWindow
	require.NoError(t, json.Unmarshal([]byte(`{"completed":2,"total":6,"message":"half"}`), &fromOld))
	assert.Equal(t, []wire.NumberedProgress{{ProgressDetails: wire.ProgressDetails{Completed: 2, Total: 6, Message: "half"}}},
		fromOld.Reports(), "the older shape: one report, unnumbered")

	var final wire.FinalProgress
	require.NoError(t, json.Unmarshal([]byte(`{"content":"ok","isError":false,"progress":{"completed":1,"total":1}}`), &final))
	assert.Equal(t, &wire.ProgressWindow{ProgressDetails: wire.ProgressDetails{Completed: 1, Total: 1}}, final.Progress,
		"a result recorded before windows")

	malformed := wire.ProgressWindow{Seq: 1, Earlier: []wire.ProgressDetails{{Completed: 1}, {Completed: 2}}}
	for _, r := range malformed.Reports()[:2] {
		assert.GreaterOrEqual(t, r.Seq, int64(0), "never a negative number")
	}
}
