package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
)

type point struct {
	X int `json:"x"`
}

type shapeInput struct {
	A      float64 `json:"a"`
	Origin *point  `json:"origin,omitempty"`
	Points []point `json:"points,omitempty"`
	Small  int8    `json:"small,omitempty"`
}

// TestInputErrorWording checks that jsonschema-go's violations are reworded
// for a model, and that every offending property is reported.
func TestInputErrorWording(t *testing.T) {
	typed, err := tools.New("shape", "Draws.", func(context.Context, shapeInput) (int, error) { return 0, nil })
	require.NoError(t, err)
	raw, err := tools.NewRaw("raw", "Checks.", json.RawMessage(`{
		"type": "object",
		"$defs": {"P": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 2}}}},
		"properties": {
			"p": {"$ref": "#/$defs/P"},
			"a/b": {"type": "string"},
			"c": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
			"m": {"type": "object", "additionalProperties": {"type": "integer"}},
			"e": {"type": "number", "exclusiveMaximum": 1.5},
			"pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
			"tags": {"type": "object", "patternProperties": {"^t_": {"type": "boolean"}}},
			"all": {"allOf": [{"type": "object", "properties": {"k": {"const": 1}}}]}
		}
	}`), func(context.Context, json.RawMessage) (any, error) { return nil, nil })
	require.NoError(t, err)
	counts, err := tools.New("count", "Counts.", func(context.Context, map[string]int) (int, error) { return 0, nil })
	require.NoError(t, err)

	tests := []struct {
		name  string
		tool  *tools.Tool
		input string
		want  string
	}{
		{"missing", typed, `{}`, `missing required property "a"`},
		{"nested type", typed, `{"a":1,"origin":{"x":"s"}}`, `property "origin.x": want integer, got string`},
		{"nested extra", typed, `{"a":1,"origin":{"x":1,"y":2}}`, `property "origin": unexpected property "y"`},
		{"array item", typed, `{"a":1,"points":[{"x":1},{}]}`, `property "points[*]": missing required property "x"`},
		{"bound", typed, `{"a":1,"small":300}`, `property "small": want at most 127, got 300`},
		{"null for a required number", typed, `{"a":null}`, `property "a": want number, got null`},
		{"all at once", typed, `{"a":"1","origin":{"x":"s"},"small":-200,"zz":0}`,
			`property "a": want number, got string; property "origin.x": want integer, got string; ` +
				`property "small": want at least -128, got -200; unexpected property "zz"`},
		{"through a $ref", raw, `{"p":{"n":1.5}}`, `property "p.n": want integer, got number`},
		{"minimum through a $ref", raw, `{"p":{"n":1}}`, `property "p.n": want at least 2, got 1`},
		{"exclusive bound", raw, `{"e":1.5}`, `property "e": want less than 1.5, got 1.5`},
		{"escaped name", raw, `{"a/b":1}`, `property "a/b": want string, got integer`},
		{"anyOf", raw, `{"c":1.5}`, `property "c": matches no alternative of anyOf: want string, got number | want integer, got number`},
		{"tuple item", raw, `{"pair":["a","b"]}`, `property "pair[1]": want integer, got string`},
		{"pattern property", raw, `{"tags":{"t_x":1}}`, `property "tags.t_x": want boolean, got integer`},
		{"allOf", raw, `{"all":{"k":2}}`, `property "all.k": const: 2 does not equal 1`},
		{"map value", raw, `{"m":{"k":"v"}}`, `property "m.k": want integer, got string`},
		{"map value beside good ones", raw, `{"m":{"a":1,"k":"v","z":2}}`, `property "m.k": want integer, got string`},
		{"a map input's value", counts, `{"good":1,"count":"three"}`, `property "count": want integer, got string`},
		{"a map input's values", counts, `{"a":"x","b":1,"c":"y"}`, `property "a": want integer, got string; property "c": want integer, got string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.tool.Call(context.Background(), json.RawMessage(tt.input))
			var inErr *tools.InputError
			require.ErrorAs(t, err, &inErr)
			assert.Equal(t, tt.want, inErr.Reason)
		})
	}
}
