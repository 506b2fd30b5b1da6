package worker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/toolcore"
)

func TestToolSetFingerprint(t *testing.T) {
	reg := func(names ...string) *toolcore.Registry {
		r, err := toolcore.NewRegistry()
		require.NoError(t, err)
		for _, name := range names {
			require.NoError(t, r.Register(tool(t, name, "")))
		}
		return r
	}
	assert.Equal(t, ToolSetFingerprint(reg("a", "b")), ToolSetFingerprint(reg("b", "a")), "order does not matter")
	assert.NotEqual(t, ToolSetFingerprint(reg("a", "b")), ToolSetFingerprint(reg("a", "b", "c")))
	assert.NotEqual(t, ToolSetFingerprint(reg("ab")), ToolSetFingerprint(reg("a", "b")), "names are delimited")
	assert.Len(t, ToolSetFingerprint(reg()), 12)
}

func TestWorkerIdentityCarriesFingerprint(t *testing.T) {
	fp, ok := fingerprintOf(workerIdentity("0123456789ab"))
	assert.True(t, ok)
	assert.Equal(t, "0123456789ab", fp)

	_, ok = fingerprintOf("4242@host@toolgate")
	assert.False(t, ok, "an SDK default identity has no fingerprint")
}
