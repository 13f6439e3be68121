package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

func writeSchema(t *testing.T, schema string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "schema.json")
	require.NoError(t, os.WriteFile(path, []byte(schema), 0o600))
	return path
}

func TestSchema(t *testing.T) {
	schema := writeSchema(t, `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)
	t.Run("answer", func(t *testing.T) {
		// The first answer fails the schema: it is not printed, and the
		// model corrects it.
		srv := newServer(t, bedrocktest.Script(bedrocktest.Text(`{"town":"Oslo"}`), bedrocktest.Text(`{"city":"Oslo"}`)))
		out := runInProcess(t, nil, "-endpoint", srv.URL, "-schema", schema, "Where?")
		require.Equal(t, 0, out.code, out.stderr)
		assert.Equal(t, "{\"city\":\"Oslo\"}\n", out.stdout)
		require.Len(t, srv.Requests(), 2)
		assert.NotNil(t, srv.Requests()[0].OutputConfig)
	})
	t.Run("json", func(t *testing.T) {
		srv := newServer(t, bedrocktest.Script(bedrocktest.Text(`{"city":"Oslo"}`)))
		out := runInProcess(t, nil, "-endpoint", srv.URL, "-json", "-schema", schema, "Where?")
		require.Equal(t, 0, out.code, out.stderr)
		var got struct{ Structured map[string]any }
		require.NoError(t, json.Unmarshal([]byte(out.stdout), &got), out.stdout)
		assert.Equal(t, map[string]any{"city": "Oslo"}, got.Structured)
	})
	for name, bad := range map[string]struct{ schema, want string }{
		"not JSON":   {`{"type":`, "answer schema: "},
		"not object": {`{"type":"array"}`, `answer schema: type must be "object", got array`},
		"bad schema": {`{"type":"object","properties":{"a":{"minLength":-1}}}`, "answer schema is not a valid JSON Schema: "},
	} {
		t.Run(name, func(t *testing.T) {
			path := writeSchema(t, bad.schema)
			out := runInProcess(t, nil, "-schema", path, "Where?")
			assert.Equal(t, 2, out.code, out.stderr)
			assert.Contains(t, out.stderr, `invalid value "`+path+`" for flag -schema: `+bad.want)
			assert.Equal(t, 1, strings.Count(out.stderr, path), "the file named once")
			assert.NotContains(t, out.stderr, "final_answer")
			assert.NotContains(t, out.stderr, "input schema", "the answer's schema is no tool's input schema")
		})
	}
	t.Run("missing file", func(t *testing.T) {
		out := runInProcess(t, nil, "-schema", filepath.Join(t.TempDir(), "none.json"), "Where?")
		assert.Equal(t, 2, out.code, out.stderr)
	})
}
