package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeSnippet: the README's first Go snippet, the library example,
// compiles as pasted.
func TestReadmeSnippet(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(readme), "```go\n")
	require.True(t, ok, "no Go snippet in the README")
	snippet, _, ok := strings.Cut(rest, "```")
	require.True(t, ok, "the README's Go snippet does not end")
	require.True(t, strings.HasPrefix(snippet, "package main\n"), "the snippet does not start with its package clause")

	// Inside the module, so that its imports resolve; "_" keeps the
	// directory out of ./... for whoever builds meanwhile.
	dir, err := os.MkdirTemp(".", "_readme")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	file := filepath.Join(dir, "main.go")
	require.NoError(t, os.WriteFile(file, []byte(snippet), 0o644))
	out, err := exec.Command("go", "vet", file).CombinedOutput()
	require.NoError(t, err, "the README's snippet:\n%s\n%s", snippet, out)
}
