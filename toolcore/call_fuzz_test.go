package toolcore

import (
	"bytes"
	"encoding/json"
	"math/big"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The seed corpora live in testdata/fuzz/FuzzParseToolCall and testdata/fuzz/FuzzArguments and
// run with plain go test. Fuzz with:
//
//	go test -run '^$' -fuzz '^FuzzParseToolCall$' -fuzztime 60s ./toolcore/
//	go test -run '^$' -fuzz '^FuzzArguments$' -fuzztime 60s ./toolcore/

// maxMessageBytes bounds every contract error message.
const maxMessageBytes = 512

// decodeStd decodes JSON with encoding/json, numbers as json.Number: the independent reading the
// snapshot must agree with.
func decodeStd(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

func FuzzParseToolCall(f *testing.F) {
	f.Add([]byte(typicalCall))
	f.Add([]byte(`{"type":"toolCall","id":"c","name":"n","arguments":{"b":"\u00e9\ud83d\ude00","a":[1.0,-0,1e3]}}`))
	f.Add([]byte(`{"type":"toolCall","id":"c","name":"n","arguments":{"a":1,"a":2}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		input := bytes.Clone(data)
		c, err := ParseToolCall(data)
		c2, err2 := ParseToolCall(data)
		require.Equal(t, input, data, "the input is not modified")
		if err != nil {
			msg := requireInvalidCall(t, err)
			assert.Equal(t, err, err2, "deterministic")
			assert.True(t, strings.HasPrefix(msg, "tool call: "), msg)
			assert.LessOrEqual(t, len(msg), maxMessageBytes, msg)
			assert.True(t, utf8.ValidString(msg), msg)
			assert.True(t, c.IsZero())
			return
		}
		require.NoError(t, err2)
		require.Equal(t, c, c2, "deterministic")
		require.False(t, c.IsZero())

		out, err := c.MarshalJSON()
		require.NoError(t, err)
		assert.LessOrEqual(t, len(out), len(data), "the snapshot is never larger than the input")
		assert.True(t, json.Valid(out))
		again, err := ParseToolCall(out)
		require.NoError(t, err, "%s", out)
		assert.Equal(t, c, again)
		out2, err := again.MarshalJSON()
		require.NoError(t, err)
		assert.Equal(t, out, out2, "canonical bytes are a fixed point")

		// encoding/json reads the same call (it is lenient only where the scanner is strict).
		std, ok := decodeStd(t, data).(map[string]any)
		require.True(t, ok)
		assert.Equal(t, c.ID(), std["id"])
		assert.Equal(t, c.Name(), std["name"])
		var args map[string]any
		require.NoError(t, c.Arguments().Decode(&args))
		assert.Equal(t, std["arguments"], args)
	})
}

// decodeTarget is a struct with one field of each kind Decode checks, for the fuzzer.
type decodeTarget struct {
	S  string            `json:"s"`
	I  int8              `json:"i"`
	U  uint32            `json:"u"`
	F  float32           `json:"f"`
	B  bool              `json:"b"`
	N  json.Number       `json:"n"`
	P  *point            `json:"p"`
	A  [2]int            `json:"a"`
	L  []map[string]any  `json:"l"`
	M  map[string]string `json:"m"`
	X  any               `json:"x"`
	Bi *big.Int          `json:"bi"`
}

func FuzzArguments(f *testing.F) {
	f.Add([]byte(accessorArgs))
	f.Add([]byte(`{"s":"x","i":-128,"u":4294967295,"f":16777216,"b":true,"n":1e999,"p":{"x":1,"y":2},"a":[1,2],"l":[{}],"m":{"k":"v"},"x":null,"bi":12}`))
	f.Add([]byte(`{"A":1,"a":{"b":[[[{"\n":"\u0000"}]]]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := NewToolCall("call-1", "tool", data)
		if err != nil {
			msg := requireInvalidCall(t, err)
			assert.LessOrEqual(t, len(msg), maxMessageBytes, msg)
			return
		}
		args := c.Arguments()
		raw := args.Raw()
		assert.LessOrEqual(t, len(raw), len(data))

		var decoded map[string]any
		require.NoError(t, args.Decode(&decoded))
		assert.Equal(t, decodeStd(t, data), decoded, "encoding/json reads the same values")
		reencoded, err := json.Marshal(decoded)
		require.NoError(t, err)
		again, err := NewToolCall("call-1", "tool", reencoded)
		require.NoError(t, err)
		assert.Equal(t, string(raw), string(again.Arguments().Raw()), "canonical form is independent of the encoder")

		keys := args.Keys()
		assert.Len(t, keys, args.Len())
		assert.True(t, slices.IsSorted(keys))
		assert.Len(t, slices.Compact(slices.Clone(keys)), len(keys))
		for _, key := range keys {
			require.True(t, args.Has(key))
			value, ok := args.Value(key)
			require.True(t, ok)
			std := decodeStd(t, value)
			assert.Equal(t, decoded[key], std)

			s, sErr := args.String(key)
			n, nErr := args.Number(key)
			b, bErr := args.Bool(key)
			switch v := std.(type) {
			case string:
				assert.NoError(t, sErr)
				assert.Equal(t, v, s)
			case json.Number:
				assert.NoError(t, nErr)
				assert.Equal(t, v, n)
			case bool:
				assert.NoError(t, bErr)
				assert.Equal(t, v, b)
			}
			if i, err := args.Int64(key); err == nil {
				want, ok := new(big.Int).SetString(string(n), 10)
				require.True(t, ok, "Int64 accepted only an integer literal: %s", n)
				assert.Equal(t, want.Int64(), i)
			}
			if fl, err := args.Float64(key); err == nil && !strings.ContainsAny(string(n), ".eE") {
				got, _ := new(big.Float).SetFloat64(fl).Int(nil)
				want, _ := new(big.Int).SetString(string(n), 10)
				assert.Zero(t, got.Cmp(want), "Float64 of an integer literal is exact: %s", n)
			}
		}
		var target decodeTarget
		_ = args.Decode(&target) // must not panic; errors are expected
		var anyTarget any
		require.NoError(t, args.Decode(&anyTarget))
	})
}
