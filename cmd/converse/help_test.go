package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"regexp"
	"slices"
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
	var topics []string
	for _, tp := range helpTopics {
		topics = append(topics, tp.name)
		assert.NotEmpty(t, tp.about, tp.name)
	}
	assert.ElementsMatch(t, topics, names, "the topics and the files of help/")

	dir := t.TempDir() // not the checkout
	for _, topic := range topics {
		t.Run(topic, func(t *testing.T) {
			out := runBinaryIn(t, dir, testEnv(t), nil, "help", topic)
			assert.Equal(t, 0, out.code, out.stderr)
			assert.Equal(t, helpText(topic), out.stdout)
			assert.NotEmpty(t, out.stdout)
		})
	}
	out := runBinaryIn(t, dir, testEnv(t), nil, "help")
	assert.Equal(t, 0, out.code)
	// Each topic on a line of its own, with what it holds.
	for _, tp := range helpTopics {
		assert.Regexp(t, `(?m)^  `+tp.name+` +`+regexp.QuoteMeta(tp.about)+`$`, out.stdout)
	}

	out = runBinaryIn(t, dir, testEnv(t), nil, "help", "nosuch")
	assert.Equal(t, 2, out.code)
	mustContain(t, "stderr", out.stderr, "converse: help nosuch: no such topic", "converse -- help nosuch")
}

// TestHelpShowsExitStatus: -h gives the exit status and names the topics.
func TestHelpShowsExitStatus(t *testing.T) {
	var stdout bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-h"}, nil, &stdout, &stdout))
	mustContain(t, "usage", stdout.String(), helpText("exit"), "130", "converse tools [flags]", "converse view [-o FILE] [-price IN,OUT[,READ,WRITE]] INPUT", "converse serve [flags]", "converse help [TOPIC]")
	more := stdout.String()[strings.Index(stdout.String(), "More:"):]
	more = strings.Join(strings.Fields(more), " ")
	for _, tp := range helpTopics {
		assert.Contains(t, more, "converse help "+tp.name, "the More: line names every topic")
	}
	assert.NotContains(t, stdout.String(), "go doc")
}

// TestReadmeListsHelpTopics: the README's map of the manual names every
// help topic.
func TestReadmeListsHelpTopics(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	for _, tp := range helpTopics {
		assert.Contains(t, string(readme), "`converse help "+tp.name+"`", "README's map of the manual")
	}
}

// TestManifestHelpApproval: the manifest help says what the approval
// prompt shows as the code and README do: the whole input.
func TestManifestHelpApproval(t *testing.T) {
	text := strings.Join(strings.Fields(helpText("manifest")), " ")
	assert.Contains(t, text, "the whole input, however long")
	assert.NotContains(t, text, "capped")
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
		assert.Contains(t, string(doc), "converse help "+topic.name)
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

// TestDocListsEveryFlag: the package doc's flag list names the flags that
// "converse -h" prints, no more and no fewer.
func TestDocListsEveryFlag(t *testing.T) {
	var usage bytes.Buffer
	_, err := promptCommand.parse([]string{"-h"}, &usage)
	require.ErrorIs(t, err, flag.ErrHelp)
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	section := string(doc)[strings.Index(string(doc), "// # Flags"):strings.Index(string(doc), "// Credentials and region")]
	names := func(pattern, text string) []string {
		var out []string
		for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(text, -1) {
			out = append(out, m[1])
		}
		slices.Sort(out)
		return out
	}
	printed := names(`(?m)^  -([a-z-]+)`, usage.String())
	require.NotEmpty(t, printed)
	documented := slices.DeleteFunc(names(`(?m)^//\t-([a-z-]+)`, section), func(n string) bool { return n == "h" })
	assert.Equal(t, printed, documented)
}
