package sandbox

import (
	"bytes"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestObjectEncoding: objects round-trip compressed or raw, and decoding refuses more bytes
// than the entry's size before allocating them (a decompression bomb, a lying frame header).
func TestObjectEncoding(t *testing.T) {
	random := make([]byte, 100<<10)
	_, err := rand.Read(random)
	require.NoError(t, err)
	text := []byte(strings.Repeat("package main\n\nfunc main() { println(\"hi\") }\n", 3000))
	for _, data := range [][]byte{nil, []byte("x"), random, text} {
		obj := encodeObject(data)
		got, err := decodeObject(obj, int64(len(data)))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(data, got))
	}
	assert.Equal(t, objectRaw, encodeObject(random)[0], "random bytes are stored raw")
	assert.Equal(t, objectZstd, encodeObject(text)[0])
	assert.Less(t, len(encodeObject(text)), len(text)/20)

	_, err = decodeObject(encodeObject(text), int64(len(text))-1)
	require.Error(t, err, "a file larger than its entry")
	_, err = decodeObject(encodeObject(random), int64(len(random))-1)
	require.Error(t, err, "a raw object larger than its entry")

	// Two frames: the first header claims little, the second brings a megabyte of zeros.
	small := encodeObject(text[:2000])
	bomb := append(small, zstdEncoder().EncodeAll(make([]byte, 1<<20), nil)...)
	_, err = decodeObject(bomb, 4000)
	require.Error(t, err, "the frames hold more than the limit")
	_, err = decodeObject([]byte{'?', 1, 2}, 10)
	require.Error(t, err)
}
