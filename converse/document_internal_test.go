package converse

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodeAsSDK decodes JSON into the kind of value the SDK's documents hold:
// maps, slices, strings, json.Numbers, bools and nils.
func decodeAsSDK(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

var documentSamples = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-1.5e-7`, `"plain"`,
	`{"b":1,"a":[true,null,{"z":"x","y":-0}],"c":{}}`,
	`{"s":"quote \" backslash \\ tab \t nl \n <html> & \u2028 \u00e9 😀 \u0001"}`,
	`{"é":1,"e":2,"E":3,"":4}`,
	`[1e400, 123456789012345678901234567890]`,
}

func TestAppendJSON(t *testing.T) {
	for _, in := range documentSamples {
		v, err := decodeAsSDK([]byte(in))
		require.NoError(t, err)
		want, err := json.Marshal(v)
		require.NoError(t, err)
		got, ok := appendJSON(nil, v, 0)
		require.True(t, ok, in)
		assert.Equal(t, string(want), string(got), in)
	}
	for _, v := range []any{
		json.Number(""), json.Number("1."), json.Number("01"), json.Number("NaN"),
		map[string]any{"a": 1.5}, []string{"a"}, struct{}{},
	} {
		_, ok := appendJSON(nil, v, 0)
		assert.False(t, ok, "%#v should be left to MarshalSmithyDocument", v)
	}
	deep := any(map[string]any{})
	for range maxDocumentDepth + 1 {
		deep = []any{deep}
	}
	_, ok := appendJSON(nil, deep, 0)
	assert.False(t, ok, "too deep")
}

// FuzzAppendJSON holds appendJSON to json.Marshal's bytes.
func FuzzAppendJSON(f *testing.F) {
	for _, in := range documentSamples {
		f.Add([]byte(in))
	}
	f.Add([]byte("\"invalid \xff utf-8\""))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decodeAsSDK(data)
		if err != nil {
			return
		}
		want, err := json.Marshal(v)
		got, ok := appendJSON(nil, v, 0)
		if err != nil || !ok {
			if ok {
				t.Fatalf("json.Marshal fails (%v) but appendJSON writes %s", err, got)
			}
			return
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("appendJSON wrote %s, json.Marshal %s", got, want)
		}
	})
}

func TestEncodeOutput(t *testing.T) {
	for _, v := range []any{
		"plain", "", "<b> & \"q\" \n \u2028 é", "bad \xff", true, false,
		0, -7, math.MaxInt64, int64(math.MinInt64), 1.5, nil, []int{1}, map[string]int{"b": 1, "a": 2},
		json.RawMessage(` {"x": 1} `),
	} {
		want, err := json.Marshal(v)
		require.NoError(t, err)
		got, err := encodeOutput(v)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "%#v", v)
	}
	_, err := encodeOutput(math.NaN())
	assert.Error(t, err)
}
