package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// screenSchemaJSON has additionalProperties: false at the top, in a nested
// object, in array items, behind a $ref, in an anyOf branch, and once with
// another keyword beside the not.
const screenSchemaJSON = `{
	"type": "object",
	"properties": {
		"a": {"type": "integer"},
		"inner": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": false},
		"list": {"type": "array", "items": {"type": "object", "properties": {"y": {"type": "number"}}, "additionalProperties": false}},
		"ref": {"$ref": "#/$defs/point"},
		"either": {"anyOf": [
			{"type": "object", "properties": {"p": {"type": "boolean"}}, "additionalProperties": false},
			{"type": "string"}
		]},
		"described": {"type": "object", "additionalProperties": {"not": {}, "description": "nothing else"}}
	},
	"additionalProperties": false,
	"$defs": {"point": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"], "additionalProperties": false}}
}`

// TestScreenSchemaAgrees checks that the screen schema and the schema as
// given pass and fail the same inputs, extra names at every depth included,
// and that screenSchema leaves the given schema as it was.
func TestScreenSchemaAgrees(t *testing.T) {
	var given jsonschema.Schema
	require.NoError(t, json.Unmarshal([]byte(screenSchemaJSON), &given))
	before, err := json.Marshal(&given)
	require.NoError(t, err)
	screen := screenSchema(&given)
	after, err := json.Marshal(&given)
	require.NoError(t, err)
	assert.JSONEq(t, string(before), string(after), "screenSchema changed the schema it copied")

	require.NotNil(t, screen)
	zeroNots := 0
	eachSchema(screen, func(s *jsonschema.Schema) {
		if falsy(s.AdditionalProperties) {
			zeroNots++
		}
	})
	assert.Zero(t, zeroNots, "the screen schema still has additionalProperties {not: {}}")

	resolve := func(s *jsonschema.Schema) *jsonschema.Resolved {
		r, err := s.Resolve(nil)
		require.NoError(t, err)
		return r
	}
	asGiven, screened := resolve(&given), resolve(screen)
	for _, tc := range []struct {
		input string
		valid bool
	}{
		{`{}`, true},
		{`{"a": 1, "inner": {"x": "s"}, "list": [{"y": 2}], "ref": {"lat": 1}, "either": {"p": true}, "described": {}}`, true},
		{`{"either": "text"}`, true},
		{`{"b": 1}`, false},
		{`{"a": 1, "b": 1, "c": 2}`, false},
		{`{"inner": {"x": "s", "z": 1}}`, false},
		{`{"list": [{"y": 1}, {"y": 2, "w": 3}]}`, false},
		{`{"ref": {"lat": 1, "lon": 2}}`, false},
		{`{"ref": {}}`, false},
		{`{"either": {"p": true, "q": 1}}`, false},
		{`{"described": {"k": 1}}`, false},
		{`{"a": "one"}`, false},
	} {
		var instance map[string]any
		require.NoError(t, json.Unmarshal([]byte(tc.input), &instance))
		assert.Equal(t, tc.valid, asGiven.Validate(instance) == nil, "as given: %s", tc.input)
		assert.Equal(t, tc.valid, screened.Validate(instance) == nil, "screen: %s", tc.input)
	}
}

// TestScreenSchemaOnlyWhenFalse checks that a schema without
// additionalProperties: false gets no screen of its own.
func TestScreenSchemaOnlyWhenFalse(t *testing.T) {
	var open jsonschema.Schema
	require.NoError(t, json.Unmarshal([]byte(`{"type": "object", "properties": {"a": {"type": "integer"}}}`), &open))
	assert.Nil(t, screenSchema(&open))
	tool, err := NewRaw("open", "Takes anything.", json.RawMessage(`{"type": "object", "properties": {"a": {"type": "integer"}}}`),
		func(context.Context, json.RawMessage) (any, error) { return nil, nil })
	require.NoError(t, err)
	assert.Same(t, tool.resolved, tool.screen)
	_, err = tool.CheckInput(json.RawMessage(`{"a": "one"}`))
	require.ErrorIs(t, err, ErrInvalidInput)
}

// TestScreenedErrorsKeepTheirWords checks that an input with extra names
// fails in the words of the schema as given, not the screen's.
func TestScreenedErrorsKeepTheirWords(t *testing.T) {
	tool, err := NewRaw("point", "Takes a point.", json.RawMessage(screenSchemaJSON),
		func(context.Context, json.RawMessage) (any, error) { return nil, nil })
	require.NoError(t, err)
	_, err = tool.CheckInput(json.RawMessage(`{"a": 1, "b": 2, "inner": {"x": "s", "z": 1}}`))
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), `unexpected property "b"`)
	assert.Contains(t, err.Error(), `property "inner"`)
	assert.NotContains(t, err.Error(), "$comment")
	assert.NotContains(t, err.Error(), "not:")
}
