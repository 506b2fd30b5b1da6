package main

import (
	"net"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// limitListener serves at most n connections at once: with one slot taken, the next Accept
// returns only after that connection is closed, and closing twice frees one slot.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := limitListener(inner, 1)
	t.Cleanup(func() { _ = ln.Close() })

	dial := func() net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	dial()
	first, err := ln.Accept()
	require.NoError(t, err)

	var firstClosed atomic.Bool
	accepted := make(chan net.Conn)
	go func() {
		c, err := ln.Accept()
		if assert.NoError(t, err) {
			assert.True(t, firstClosed.Load(), "a second connection was accepted while the first was open")
		}
		accepted <- c
	}()
	dial() // waits in the listen queue
	firstClosed.Store(true)
	require.NoError(t, first.Close())
	_ = first.Close() // a second Close frees nothing more
	second := <-accepted
	require.NotNil(t, second)

	// Still one slot: a third waits for the second.
	var secondClosed atomic.Bool
	go func() {
		c, err := ln.Accept()
		if assert.NoError(t, err) {
			assert.True(t, secondClosed.Load(), "the double Close freed a second slot")
		}
		accepted <- c
	}()
	dial()
	secondClosed.Store(true)
	require.NoError(t, second.Close())
	require.NotNil(t, <-accepted)
}
