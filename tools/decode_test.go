package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
)

type xPoint struct {
	X int `json:"x"`
}

type numbersInput struct {
	N   int              `json:"n,omitempty"`
	I8  int8             `json:"i8,omitempty"`
	U8  uint8            `json:"u8,omitempty"`
	U64 uint64           `json:"u64,omitempty"`
	I64 int64            `json:"i64,omitempty"`
	F   float64          `json:"f,omitempty"`
	F32 float32          `json:"f32,omitempty"`
	P   *xPoint          `json:"p,omitempty"`
	L   []xPoint         `json:"l,omitempty"`
	M   map[string]int16 `json:"m,omitempty"`
	S   string           `json:"s,omitempty"`
}

func numbersTool(t *testing.T) *tools.Tool {
	t.Helper()
	tool, err := tools.New("numbers", "Takes numbers.", func(_ context.Context, in numbersInput) (numbersInput, error) {
		return in, nil
	})
	require.NoError(t, err)
	return tool
}

func TestTypedIntegralNumbers(t *testing.T) {
	tests := []struct {
		input string
		want  numbersInput
	}{
		{`{"n":3.0}`, numbersInput{N: 3}},
		{`{"n":1e2,"i8":-1.0E1,"u8":2.55e2,"f":2.5}`, numbersInput{N: 100, I8: -10, U8: 255, F: 2.5}},
		{`{"n":-0.0}`, numbersInput{}},
		{`{"n":250e-1}`, numbersInput{N: 25}},
		{`{"n":0.0001e4}`, numbersInput{N: 1}},
		{`{"u64":1.8446744073709551615e19}`, numbersInput{U64: 18446744073709551615}},
		{`{"i64":9007199254740993.0}`, numbersInput{I64: 9007199254740993}},
		{`{"p":{"x":7.0},"l":[{"x":1},{"x":2.0}],"m":{"a":3.0,"b":-4e0}}`, numbersInput{P: &xPoint{X: 7}, L: []xPoint{{X: 1}, {X: 2}}, M: map[string]int16{"a": 3, "b": -4}}},
		{`{"s":"3.0 \"1e2\"","n":4.0}`, numbersInput{S: `3.0 "1e2"`, N: 4}},
	}
	tool := numbersTool(t)
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			out, err := tool.Call(context.Background(), json.RawMessage(tt.input))
			require.NoError(t, err)
			assert.Equal(t, tt.want, out)
		})
	}
}

func TestTypedDecodeErrorsInModelWords(t *testing.T) {
	tests := []struct {
		input, reason string
	}{
		// What the schema inferred from the Go type does not rule out fails
		// when the input is decoded.
		{`{"n":1e30}`, `property "n": want integer from -9223372036854775808 to 9223372036854775807, got 1e30`},
		{`{"i64":-9223372036854775809}`, `property "i64": want integer from -9223372036854775808 to 9223372036854775807, got -9223372036854775809`},
		{`{"u64":1.8446744073709551616e19}`, `property "u64": want integer from 0 to 18446744073709551615, got 18446744073709551616`},
		{`{"f32":1e300}`, `property "f32": want number of at most 3.4028234663852886e+38 in magnitude, got 1e300`},
		{`{"p":{"x":1e21}}`, `property "p.x": want integer from -9223372036854775808 to 9223372036854775807, got 1e21`},
		// The rest the schema catches first.
		{`{"n":3.5}`, `property "n": want integer, got number`},
		{`{"i8":3e2}`, `property "i8": want at most 127, got 300`},
		{`{"u8":-1}`, `property "u8": want at least 0, got -1`},
		{`{"l":[{"x":1},{"x":2.5}]}`, `property "l[*].x": want integer, got number`},
		{`{"m":{"a":70000}}`, `property "m.a": want at most 32767, got 70000`},
	}
	tool := numbersTool(t)
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			_, err := tool.Call(context.Background(), json.RawMessage(tt.input))
			var inErr *tools.InputError
			require.ErrorAs(t, err, &inErr)
			assert.Equal(t, "numbers", inErr.Tool)
			assert.Equal(t, tt.reason, inErr.Reason)
			assert.Equal(t, "invalid input: "+tt.reason, err.Error())
			for _, goWord := range []string{"Go ", "struct", "int8", "uint", "float32", "json:", "tools:", "numbersInput"} {
				assert.NotContains(t, inErr.Reason, goWord)
			}
		})
	}
}
