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

// TestReadmeSnippets: the README's ```go temporal blocks (which the core
// module's own README test leaves out, having no Temporal) compile, each
// as the body of a function taking what it uses.
func TestReadmeSnippets(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
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
	rest, n := string(readme), 0
	for {
		var block string
		var ok bool
		if _, rest, ok = strings.Cut(rest, "```go temporal\n"); !ok {
			break
		}
		block, rest, ok = strings.Cut(rest, "```")
		require.True(t, ok, "a snippet does not end")
		n++
		fmt.Fprintf(&b, "\nfunc snippet%d(ctx context.Context, cfg aws.Config, c client.Client, modelID string) {\n{\n%s\n_ = err\n}\n}\n", n, block)
	}
	require.Equal(t, 2, n, "the README's worker and starter")
	dir, err := os.MkdirTemp(".", "_readme") // "_": out of ./...
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(b.String()), 0o644))
	out, err := exec.Command("go", "vet", "./"+dir).CombinedOutput()
	require.NoError(t, err, "the README's snippets:\n%s\n%s", out, b.String())
}
