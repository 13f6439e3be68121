package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
)

func TestNewRawChecksSchemaAgainstMetaSchema(t *testing.T) {
	rawFn := func(context.Context, json.RawMessage) (any, error) { return "ok", nil }
	bad := []struct {
		name, schema, want string
	}{
		{"unknown type", `{"type":"nonsense"}`, `at "type": matches no alternative of anyOf: want one of`},
		{"unknown nested type", `{"type":"object","properties":{"n":{"type":"nonsense"}}}`, `at "properties.*.type"`},
		{"negative minLength", `{"type":"object","properties":{"s":{"type":"string","minLength":-1}}}`, `at "properties.*.minLength": want at least 0, got -1`},
		{"fractional maxItems", `{"type":"object","properties":{"l":{"type":"array","maxItems":1.5}}}`, `at "properties.*.maxItems": want integer, got number`},
		{"required not an array", `{"type":"object","required":"x"}`, `at "required": want array, got string`},
		{"required of numbers", `{"type":"object","required":[1]}`, `at "required[*]": want string, got integer`},
		{"properties not an object", `{"type":"object","properties":[]}`, `at "properties": want object, got array`},
		{"property schema a string", `{"type":"object","properties":{"x":"string"}}`, `at "properties.*"`},
		{"items not a schema", `{"type":"object","properties":{"l":{"type":"array","items":[{"type":"string"}]}}}`, `at "properties.*.items"`},
		{"enum not an array", `{"type":"object","properties":{"e":{"enum":"a"}}}`, `at "properties.*.enum": want array, got string`},
		{"additionalProperties a string", `{"type":"object","additionalProperties":"no"}`, `at "additionalProperties"`},
		{"bad definition", `{"type":"object","$defs":{"d":{"minimum":"1"}}}`, `at "$defs.*.minimum": want number, got string`},
		{"empty prefixItems", `{"type":"object","properties":{"t":{"prefixItems":[]}}}`, `at "properties.*.prefixItems"`},
		{"draft-07 bad type", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"nonsense"}}}`, `input schema is not a valid JSON Schema`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := tools.NewRaw("a", "d", json.RawMessage(tt.schema), rawFn)
			assert.Nil(t, tool)
			require.ErrorIs(t, err, tools.ErrInvalidTool)
			assert.Contains(t, err.Error(), `tools: invalid tool "a": input schema is not a valid JSON Schema: `)
			assert.Contains(t, err.Error(), tt.want)

			_, err = tools.Command("a", "d", json.RawMessage(tt.schema), []string{"true"})
			require.ErrorIs(t, err, tools.ErrInvalidTool, "Command checks the schema too")
		})
	}

	good := []struct{ name, schema string }{
		{"empty object", `{"type":"object"}`},
		{"typical", `{"type":"object","properties":{"city":{"type":"string","minLength":1,"description":"a city"},"days":{"type":"integer","minimum":0,"default":1}},"required":["city"],"additionalProperties":false}`},
		{"nested and referenced", `{"type":"object","properties":{"p":{"$ref":"#/$defs/point"},"l":{"type":"array","items":{"type":["number","null"]},"maxItems":3}},"$defs":{"point":{"type":"object","properties":{"x":{"type":"number"}}}}}`},
		{"unknown keyword", `{"type":"object","x-vendor":{"anything":true}}`},
		{"draft 2020-12 declared", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"t":{"type":"array","prefixItems":[{"type":"string"}]}}}`},
		{"draft-07 tuple items", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"t":{"type":"array","items":[{"type":"string"}]}}}`},
	}
	for _, tt := range good {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := tools.NewRaw("a", "d", json.RawMessage(tt.schema), rawFn)
			require.NoError(t, err)
			_, err = tool.Call(context.Background(), nil)
			assert.NotErrorIs(t, err, tools.ErrInvalidTool)
		})
	}
}
