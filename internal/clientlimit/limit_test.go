package clientlimit

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLimiterForgetsRefilledClients(t *testing.T) {
	l := New(2, 2)
	now := time.Unix(1000, 0)
	ok, _ := l.Allow("a", now)
	require.True(t, ok)
	ok, _ = l.Allow("b", now)
	require.True(t, ok)
	ok, wait := l.Allow("c", now)
	assert.False(t, ok, "no room for a third client while the two have spent tokens")
	assert.Positive(t, wait)
	ok, _ = l.Allow("c", now.Add(time.Minute))
	assert.True(t, ok, "refilled clients are forgotten to make room")
}

func TestLimiterRefusesPastTheBudgetUntilItRefills(t *testing.T) {
	l := New(2, 10)
	now := time.Unix(1000, 0)
	for range 2 {
		ok, _ := l.Allow("a", now)
		require.True(t, ok)
	}
	ok, wait := l.Allow("a", now)
	assert.False(t, ok)
	assert.GreaterOrEqual(t, wait, time.Second)
	ok, _ = l.Allow("a", now.Add(30*time.Second))
	assert.True(t, ok, "half a minute refills one of two a minute")
}

func TestAddressIsTheRemoteHost(t *testing.T) {
	assert.Equal(t, "192.0.2.1", Address(&http.Request{RemoteAddr: "192.0.2.1:1000"}))
	assert.Equal(t, "::1", Address(&http.Request{RemoteAddr: "[::1]:1000"}))
	assert.Equal(t, "pipe", Address(&http.Request{RemoteAddr: "pipe"}))
}
