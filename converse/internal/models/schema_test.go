package models

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCloseObjects(t *testing.T) {
	tests := []struct {
		name, schema, want, err string
	}{
		{name: "root", schema: `{"type":"object","properties":{"a":{"type":"string"}}}`,
			want: `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`},
		{name: "nested, items, anyOf and $defs",
			schema: `{"type":"object","additionalProperties":false,"properties":{"o":{"type":"object"},"l":{"type":"array","items":{"type":"object"}},"u":{"anyOf":[{"type":["object","null"]},{"type":"string"}]}},"$defs":{"d":{"properties":{}}}}`,
			want:   `{"type":"object","additionalProperties":false,"properties":{"o":{"type":"object","additionalProperties":false},"l":{"type":"array","items":{"type":"object","additionalProperties":false}},"u":{"anyOf":[{"type":["object","null"],"additionalProperties":false},{"type":"string"}]}},"$defs":{"d":{"properties":{},"additionalProperties":false}}}`},
		{name: "no objects", schema: `{"type":"string"}`, want: `{"type":"string"}`},
		{name: "additionalProperties true", schema: `{"type":"object","properties":{"a":{"type":"object","additionalProperties":true}}}`,
			err: "the object schema at /properties/a sets additionalProperties, which must be false or left out"},
		{name: "a map's schema", schema: `{"type":"object","additionalProperties":{"type":"integer"}}`,
			err: "the object schema at the root sets additionalProperties, which must be false or left out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(tt.schema), &m))
			err := CloseObjects(m)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			got, err := json.Marshal(m)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
			_, open := OpenObject(m)
			assert.False(t, open, "a closed schema has no open object")
		})
	}
}

func TestOpenObject(t *testing.T) {
	tests := []struct {
		schema string
		value  any
		open   bool
	}{
		{schema: `{"type":"object","additionalProperties":false}`},
		{schema: `{"type":"object"}`, open: true},
		{schema: `{"type":"object","additionalProperties":true}`, value: true, open: true},
		{schema: `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"array","prefixItems":[{"type":"object"}]}}}`, open: true},
		{schema: `{"type":"array","items":{"type":"string"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.schema, func(t *testing.T) {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(tt.schema), &m))
			value, open := OpenObject(m)
			assert.Equal(t, tt.open, open)
			assert.Equal(t, tt.value, value)
		})
	}
}

func TestDropUnsupported(t *testing.T) {
	for _, tc := range []struct {
		name, schema, want string
	}{
		{"bounds of a number", `{"type":"integer","minimum":-128,"maximum":127}`,
			`{"type":"integer","description":"{minimum: -128, maximum: 127}"}`},
		{"beside a description", `{"type":"string","description":"a name","minLength":1,"maxLength":20}`,
			`{"type":"string","description":"a name\n\n{minLength: 1, maxLength: 20}"}`},
		{"a minItems of 1 is taken", `{"type":"array","items":{"type":"string"},"minItems":1}`,
			`{"type":"array","items":{"type":"string"},"minItems":1}`},
		{"a minItems of 2 is not", `{"type":"array","items":{"type":"string"},"minItems":2,"uniqueItems":true}`,
			`{"type":"array","items":{"type":"string"},"description":"{minItems: 2, uniqueItems: true}"}`},
		{"in properties, items and $defs", `{"type":"object","properties":{"n":{"type":"integer","multipleOf":5},"l":{"type":"array","items":{"$ref":"#/$defs/p"}}},"$defs":{"p":{"type":"number","exclusiveMaximum":1}}}`,
			`{"type":"object","properties":{"n":{"type":"integer","description":"{multipleOf: 5}"},"l":{"type":"array","items":{"$ref":"#/$defs/p"}}},"$defs":{"p":{"type":"number","description":"{exclusiveMaximum: 1}"}}}`},
		{"a property named as a keyword", `{"type":"object","properties":{"minimum":{"type":"integer"}}}`,
			`{"type":"object","properties":{"minimum":{"type":"integer"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.schema), &m))
			_, _, found := UnsupportedKeyword(m)
			DropUnsupported(m)
			got, err := json.Marshal(m)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(got))
			_, _, left := UnsupportedKeyword(m)
			assert.False(t, left, "nothing unsupported is left")
			assert.Equal(t, tc.schema != tc.want, found)
		})
	}
	keyword, typ, found := UnsupportedKeyword(map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "minimum": 1.0}}})
	assert.Equal(t, []any{"minimum", "integer", true}, []any{keyword, typ, found})
}
