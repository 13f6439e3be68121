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
	t.Run("json of a forced answer", func(t *testing.T) {
		// Nova answers by calling the final tool: the answer ends the
		// conversation, and -json says end_turn, not tool_use.
		srv := newServer(t, bedrocktest.Script(bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "final_answer", Input: map[string]any{"city": "Oslo"}})))
		out := runInProcess(t, nil, "-endpoint", srv.URL, "-model", "us.amazon.nova-pro-v1:0", "-json", "-schema", schema, "Where?")
		require.Equal(t, 0, out.code, out.stderr)
		var got struct {
			StopReason string
			Structured map[string]any
		}
		require.NoError(t, json.Unmarshal([]byte(out.stdout), &got), out.stdout)
		assert.Equal(t, map[string]any{"city": "Oslo"}, got.Structured)
		assert.Equal(t, "end_turn", got.StopReason)
	})
	t.Run("never valid", func(t *testing.T) {
		// Every answer fails the schema: the failure says why, not that
		// the model wanted tools, and -v shows each answer sent back.
		srv := newServer(t, bedrocktest.Script(bedrocktest.Text(`{"town":"Oslo"}`), bedrocktest.Text(`{"town":"Bergen"}`), bedrocktest.Text(`{"town":"Tromsø"}`)))
		out := runInProcess(t, nil, "-endpoint", srv.URL, "-schema", schema, "-max-turns", "3", "-v", "Where?")
		require.Equal(t, exitLimit, out.code, out.stderr)
		assert.Empty(t, out.stdout)
		mustContain(t, "stderr", out.stderr,
			`· turn 1: answer rejected and sent back (missing required property "city"): {"town":"Oslo"}`,
			`· turn 2: answer rejected and sent back (missing required property "city"): {"town":"Bergen"}`,
			`converse: no answer matched the -schema in 3 model calls (-max-turns 3): the answer does not match the schema: missing required property "city"; raise -max-turns`)
		assert.NotContains(t, out.stderr, "turn 3: answer rejected", "the last answer is not sent back")
		assert.NotContains(t, out.stderr, "wanted tools")
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
