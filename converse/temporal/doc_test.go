package temporal_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDocSnippets: the worker and the starter of the package doc's
// section "The worker and the starter" compile, each as the body of a
// function taking what it uses.
func TestDocSnippets(t *testing.T) {
	snippets := docSnippets(t, "The worker and the starter")
	var b strings.Builder
	b.WriteString(`package main

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/temporal"
	"github.com/tooluse/bedrock/tools"
)

func main() {}

var (
	_ = time.Second
	_ workflow.ActivityOptions
	_ converse.Decision
	_ tools.Tool
	_ bedrockruntime.Options
	_ worker.Options
)
`)
	for i, block := range snippets {
		fmt.Fprintf(&b, "\nfunc snippet%d(ctx context.Context, cfg aws.Config, c client.Client, modelID string) {\n{\n%s\n_ = err\n}\n}\n", i+1, block)
	}
	require.Len(t, snippets, 2, "the doc's worker and starter")
	dir, err := os.MkdirTemp(".", "_docsnippets") // "_": out of ./...
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(b.String()), 0o644))
	out, err := exec.Command("go", "vet", "./"+dir).CombinedOutput()
	require.NoError(t, err, "the doc's snippets:\n%s\n%s", out, b.String())
}

// docSnippets returns the code blocks of doc.go's section heading, their
// comment markers and indentation taken off.
func docSnippets(t *testing.T, heading string) []string {
	t.Helper()
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(doc), "// # "+heading+"\n")
	require.True(t, ok, "no section %q in doc.go", heading)
	section, _, _ = strings.Cut(section, "// # ")
	var blocks []string
	var cur []string
	for line := range strings.SplitSeq(section, "\n") {
		if code, ok := strings.CutPrefix(line, "//\t"); ok {
			cur = append(cur, code)
			continue
		}
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	return blocks
}
