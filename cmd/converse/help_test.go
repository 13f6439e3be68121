package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelpTopics: every topic of "converse help" prints its text from the
// binary, outside any checkout, and every text is a topic.
func TestHelpTopics(t *testing.T) {
	t.Parallel()
	files, err := fs.Glob(helpFiles, "help/*.txt")
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(strings.TrimPrefix(f, "help/"), ".txt"))
	}
	assert.ElementsMatch(t, helpTopics, names, "the topics and the files of help/")

	dir := t.TempDir() // not the checkout
	for _, topic := range helpTopics {
		t.Run(topic, func(t *testing.T) {
			out := runBinaryIn(t, dir, testEnv(t), nil, "help", topic)
			assert.Equal(t, 0, out.code, out.stderr)
			assert.Equal(t, helpText(topic), out.stdout)
			assert.NotEmpty(t, out.stdout)
		})
	}
	out := runBinaryIn(t, dir, testEnv(t), nil, "help")
	assert.Equal(t, 0, out.code)
	mustContain(t, "converse help", out.stdout, helpTopics...)

	out = runBinaryIn(t, dir, testEnv(t), nil, "help", "nosuch")
	assert.Equal(t, 2, out.code)
	mustContain(t, "stderr", out.stderr, "converse: help nosuch: no such topic", "converse -- help nosuch")
}

// TestHelpShowsExitStatus: -h gives the exit status and names the topics.
func TestHelpShowsExitStatus(t *testing.T) {
	var stdout bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-h"}, nil, &stdout, &stdout))
	mustContain(t, "usage", stdout.String(), helpText("exit"), "130", "converse help manifest", "converse help json", "converse help recording")
	assert.NotContains(t, stdout.String(), "go doc")
}

// TestManifestHelpExample: the example of "converse help manifest" is a
// manifest, with every field it documents.
func TestManifestHelpExample(t *testing.T) {
	var m manifest
	text := helpExample(t, "manifest", "  ]}", &m)
	require.Len(t, m.Tools, 2)
	tool := m.Tools[0]
	assert.NotEmpty(t, tool.Env)
	assert.NotEmpty(t, tool.InheritEnv)
	assert.NotEmpty(t, tool.Timeout)
	function := m.Tools[1]
	assert.NotEmpty(t, function.Lambda)
	assert.NotEmpty(t, function.Qualifier)
	assert.True(t, function.Approve)
	for _, field := range []string{"name", "description", "inputSchema", "command", "lambda", "qualifier", "timeout", "env", "inheritEnv", "approve"} {
		assert.Contains(t, text, "\n  "+field+" ", "the manifest help describes %s", field)
	}
}

// TestDocPointsToHelp: the package doc sends readers to each help topic.
func TestDocPointsToHelp(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	for _, topic := range helpTopics {
		assert.Contains(t, string(doc), "converse help "+topic)
	}
}

// helpExample decodes into v, strictly, the JSON example of the help
// topic: from its first "{" to its line last. It returns the topic's text.
func helpExample(t *testing.T, topic, last string, v any) string {
	t.Helper()
	text := helpText(topic)
	start, end := strings.Index(text, "{"), strings.Index(text, "\n"+last+"\n")
	require.True(t, start >= 0 && end > start, "no example")
	dec := json.NewDecoder(strings.NewReader(text[start : end+1+len(last)]))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v))
	return text
}
