package main

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// snippetParams are what the README's Go fragments take as given: each
// one is the body of a function with these parameters.
const snippetParams = "ctx context.Context, cfg aws.Config, client *bedrockruntime.Client, reg *tools.Registry, " +
	"model, modelID, token string, schema json.RawMessage"

// snippetImports are the packages a fragment may use, by name.
var snippetImports = map[string]string{
	"bedrocktest": "github.com/tooluse/bedrock/converse/bedrocktest",
	"converse":    "github.com/tooluse/bedrock/converse",
	"errors":      "errors",
	"fmt":         "fmt",
	"json":        "encoding/json",
	"lambda":      "github.com/aws/aws-sdk-go-v2/service/lambda",
	"lambdatool":  "github.com/tooluse/bedrock/tools/lambdatool",
	"mcptools":    "github.com/tooluse/bedrock/tools/mcptools",
	"os":          "os",
	"quota":       "github.com/tooluse/bedrock/converse/quota",
	"retry":       "github.com/aws/aws-sdk-go-v2/aws/retry",
	"slog":        "log/slog",
	"time":        "time",
	"trace":       "github.com/tooluse/bedrock/converse/trace",
	"types":       "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types",
}

// readmeSnippets returns the README's ```go blocks: the library example, a
// whole program, and the fragments.
func readmeSnippets(t *testing.T) (program string, fragments []string) {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	rest := string(readme)
	for {
		var block string
		var ok bool
		if _, rest, ok = strings.Cut(rest, "```go\n"); !ok {
			break
		}
		block, rest, ok = strings.Cut(rest, "```")
		require.True(t, ok, "a Go snippet of the README does not end")
		if strings.HasPrefix(block, "package main\n") {
			require.Empty(t, program, "two programs in the README")
			program = block
			continue
		}
		fragments = append(fragments, block)
	}
	require.NotEmpty(t, program, "no library example in the README")
	return program, fragments
}

// fragmentsFile makes one Go file of the fragments, each the body of a
// function taking snippetParams (with a type ocrInput for the Lambda
// example). A fragment may leave the variables it declares at its top
// level for the code that would follow; a variable declared and not used
// inside it, as in an if block, fails the build, as it would for a reader.
func fragmentsFile(t *testing.T, fragments []string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n\t\"context\"\n\t\"encoding/json\"\n\n\t\"github.com/aws/aws-sdk-go-v2/aws\"\n" +
		"\t\"github.com/aws/aws-sdk-go-v2/service/bedrockruntime\"\n\n\t\"github.com/tooluse/bedrock/tools\"\n")
	all := strings.Join(fragments, "\n")
	for name, path := range snippetImports {
		if name != "json" && strings.Contains(all, name+".") {
			fmt.Fprintf(&b, "\t%s %q\n", name, path)
		}
	}
	b.WriteString(")\n\nfunc main() {}\n\ntype ocrInput struct {\n\tKey string `json:\"key\"`\n}\n")
	for i, f := range fragments {
		// In a block of its own, a fragment may declare a parameter's name.
		fmt.Fprintf(&b, "\nfunc snippet%d(%s) error {\n{\n%s\n%s\n}\nreturn nil\n}\n", i+1, snippetParams, f, leftForLater(t, f))
	}
	return b.String()
}

// leftForLater is "_ = a; _ = b" for the variables fragment declares at
// its top level.
func leftForLater(t *testing.T, fragment string) string {
	t.Helper()
	src := "package p\nfunc f() {\n" + fragment + "\n}\n"
	file, err := parser.ParseFile(token.NewFileSet(), "fragment.go", src, 0)
	require.NoError(t, err, "a Go fragment of the README:\n%s", fragment)
	var uses []string
	for _, stmt := range file.Decls[0].(*ast.FuncDecl).Body.List {
		if as, ok := stmt.(*ast.AssignStmt); ok && as.Tok == token.DEFINE {
			for _, lhs := range as.Lhs {
				if id, ok := lhs.(*ast.Ident); ok && id.Name != "_" {
					uses = append(uses, "_ = "+id.Name)
				}
			}
		}
	}
	return strings.Join(uses, "; ")
}

// TestReadmeSnippets: every Go snippet of the README compiles as pasted,
// and the library example, run against a bedrocktest server, prints what
// it should.
func TestReadmeSnippets(t *testing.T) {
	t.Parallel()
	program, fragments := readmeSnippets(t)

	// Inside the module, so that its imports resolve; "_" keeps the
	// directory out of ./... for whoever builds meanwhile.
	dir, err := os.MkdirTemp(".", "_readme")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	for name, src := range map[string]string{"program": program, "fragments": fragmentsFile(t, fragments)} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, name), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name, "main.go"), []byte(src), 0o644))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	vet := exec.CommandContext(ctx, "go", "vet", "./"+filepath.Join(dir, "program"), "./"+filepath.Join(dir, "fragments"))
	out, err := vet.CombinedOutput()
	require.NoError(t, err, "the README's snippets:\n%s", out)

	bin := filepath.Join(t.TempDir(), "example")
	out, err = exec.CommandContext(ctx, "go", "build", "-o", bin, "./"+filepath.Join(dir, "program")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	// The example's plain SDK client meets the SDK's loopback trap (see
	// converse/internal/httpbody: the SDK closes a request body the
	// transport may still be copying, and the stream's connection drops,
	// "use of closed network connection"), which a remote endpoint, slower
	// to answer, does not set. Answered at once, 7% of the runs failed so
	// on a busy machine; answered after 5 ms, none of 400. That failure,
	// and only that, is still tried once more on a fresh server.
	var stdout []byte
	var stderr strings.Builder
	for attempt := 1; ; attempt++ {
		srv := newServer(t, bedrocktest.Delay(5*time.Millisecond, bedrocktest.Script(
			bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "get_weather", Input: map[string]any{"city": "Paris"}}),
			bedrocktest.Text("It is 21°C in Paris."),
		)))
		run := exec.CommandContext(ctx, bin)
		run.Env = testEnv(t, "AWS_ENDPOINT_URL_BEDROCK_RUNTIME="+srv.URL)
		stderr.Reset()
		run.Stderr = &stderr
		stdout, err = run.Output()
		if err == nil || attempt == 2 || !strings.Contains(stderr.String(), "use of closed network connection") {
			break
		}
	}
	require.NoError(t, err, "the README's example program failed; its stderr:\n%s", stderr.String())
	assert.Equal(t, "It is 21°C in Paris.\nend_turn, 2 turns, 30 tokens\n", string(stdout))
}
