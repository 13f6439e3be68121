package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools/mcptools"
)

func TestParseMCP(t *testing.T) {
	dir := t.TempDir()
	t.Run("servers", func(t *testing.T) {
		servers, err := parseMCP([]byte(`{"mcpServers": {
			"web": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}, "timeout": "5s", "maxConcurrency": 2, "approve": "destructive"},
			"files": {"command": "sh", "args": ["-c", "not a shell: an argument"], "env": {"ROOT": "/tmp"}, "include": ["read"], "exclude": ["write"], "approve": true},
			"off": {"command": "nope-not-here", "disabled": true},
			"typed": {"type": "stdio", "command": "sh", "autoApprove": ["x"], "alwaysAllow": ["y"]}
		}}`), dir)
		require.NoError(t, err)
		require.Len(t, servers, 3)
		files, typed, web := servers[0], servers[1], servers[2]
		assert.Equal(t, "files", files.Name)
		assert.Equal(t, "-c", files.Command[1])
		assert.True(t, filepath.IsAbs(files.Command[0]), "looked up in PATH")
		assert.Equal(t, map[string]string{"ROOT": "/tmp"}, files.Env)
		assert.Equal(t, []string{"read"}, files.Include)
		assert.Equal(t, []string{"write"}, files.Exclude)
		assert.True(t, files.ApprovalPolicy("read", mcptools.Annotations{ReadOnly: true}))
		assert.Equal(t, "typed", typed.Name)
		assert.Nil(t, typed.ApprovalPolicy)
		assert.Equal(t, "https://example.com/mcp", web.URL)
		assert.Equal(t, map[string]string{"Authorization": "Bearer x"}, web.Headers)
		assert.Equal(t, 5*time.Second, web.Timeout)
		assert.Equal(t, 2, web.Concurrency)
		assert.False(t, web.ApprovalPolicy("read", mcptools.Annotations{ReadOnly: true}))
		assert.True(t, web.ApprovalPolicy("rm", mcptools.Annotations{Destructive: true}))
	})
	tests := []struct{ name, config, want string }{
		{"empty", `{}`, "no servers"},
		{"unknown field", `{"mcpServers": {"a": {"command": "sh"}, "b": {"command": "sh", "comand": "x"}}}`, `server "b": unknown field "comand"`},
		{"unknown field at the top", `{"mcpServers": {"a": {"command": "sh"}}, "extra": 1}`, `unknown field "extra"`},
		{"VS Code's form", `{"servers": {"a": {"command": "sh"}}}`, `unknown field "servers": did you mean "mcpServers"?`},
		{"data after the object", "{\"mcpServers\": {\"a\": {\"command\": \"sh\"}}}\n\n{\"x\": 1}", "line 3: data after the JSON object"},
		{"blank name", `{"mcpServers": {" ": {"command": "sh"}}}`, `server " ": a server without a name`},
		{"url without a host", `{"mcpServers": {"a": {"url": "http://"}}}`, `server "a": "url" "http://": want an http or https URL with a host`},
		{"env name with =", `{"mcpServers": {"a": {"command": "sh", "env": {"A=B": "1"}}}}`, `server "a": "env" "A=B": a name must be non-empty, without '=' or NUL`},
		{"both", `{"mcpServers": {"a": {"command": "sh", "url": "http://x"}}}`, `server "a": both "command" and "url"`},
		{"neither", `{"mcpServers": {"a": {}}}`, `server "a": want "command"`},
		{"sse", `{"mcpServers": {"a": {"type": "sse", "url": "http://x"}}}`, `"type": "sse" is not supported`},
		{"bad url", `{"mcpServers": {"a": {"url": "ftp://x"}}}`, `"url" "ftp://x": want an http or https URL with a host`},
		{"bad timeout", `{"mcpServers": {"a": {"command": "sh", "timeout": "soon"}}}`, `"timeout" "soon"`},
		{"bad approve", `{"mcpServers": {"a": {"command": "sh", "approve": "sometimes"}}}`, `"approve" "sometimes": want true, false or "destructive"`},
		{"missing program", `{"mcpServers": {"a": {"command": "no-such-mcp-server-here"}}}`, `the MCP server "a" could not be started: command no-such-mcp-server-here: not found in PATH`},
		{"env for url", `{"mcpServers": {"a": {"url": "http://x", "env": {"A": "1"}}}}`, `"env" is for a "command"`},
		{"not json", `{"mcpServers": `, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseMCP([]byte(tt.config), dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// writeMCP writes an -mcp file for the test.
func writeMCP(t *testing.T, config string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(path, []byte(config), 0o600))
	return path
}

// greeter serves an MCP server with a greet tool, which it declares
// read-only, on loopback, and returns its URL.
func greeter(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Greets.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Name string `json:"name"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + in.Name}}}, nil, nil
		})
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(web.Close)
	return web.URL
}

func TestMCPToolsJoinTheOthers(t *testing.T) {
	config := writeMCP(t, `{"mcpServers": {"web": {"url": "`+greeter(t)+`"}}}`)

	model := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("",
			bedrocktest.Call{ID: "t_greet", Name: "web__greet", Input: map[string]any{"name": "Ada"}},
			bedrocktest.Call{ID: "t_calc", Name: "calculator", Input: map[string]any{"expression": "1+1"}},
		),
		bedrocktest.Text("Done."),
	))
	out := runInProcess(t, nil, "-endpoint", model.URL, "-mcp", config, "-v", "Greet Ada.")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, "Done.\n", out.stdout)
	assert.Contains(t, out.stderr, "· MCP server web started: 1 tools")

	first := model.Requests()[0]
	var offered []string
	for _, tool := range first.ToolConfig.Tools {
		if spec, ok := tool.(*types.ToolMemberToolSpec); ok {
			offered = append(offered, *spec.Value.Name)
		}
	}
	assert.Contains(t, offered, "web__greet")
	assert.Contains(t, offered, "calculator", "beside the built-ins")

	results := toolResults(t, model.Requests()[1])
	assert.Equal(t, types.ToolResultStatusSuccess, results["t_greet"].Status)
	assert.Equal(t, `"hello Ada"`, resultText(results["t_greet"]))
}

// "approve" makes the calls of a server's tools need approval: without a
// terminal or -yes they are denied, with -yes they run.
func TestMCPApprove(t *testing.T) {
	config := writeMCP(t, `{"mcpServers": {"web": {"url": "`+greeter(t)+`", "approve": true}}}`)
	for _, yes := range []bool{false, true} {
		t.Run(fmt.Sprintf("yes=%v", yes), func(t *testing.T) {
			model := newServer(t, bedrocktest.Script(
				bedrocktest.ToolUse("", bedrocktest.Call{ID: "t_greet", Name: "web__greet", Input: map[string]any{"name": "Ada"}}),
				bedrocktest.Text("Done."),
			))
			args := []string{"-endpoint", model.URL, "-mcp", config}
			if yes {
				args = append(args, "-yes")
			}
			out := runInProcess(t, strings.NewReader(""), append(args, "Greet Ada.")...)
			require.Equal(t, 0, out.code, out.stderr)
			result := toolResults(t, model.Requests()[1])["t_greet"]
			if yes {
				assert.Equal(t, `"hello Ada"`, resultText(result))
				return
			}
			assert.Equal(t, types.ToolResultStatusError, result.Status)
			assert.Contains(t, resultText(result), "denied")
		})
	}
}

// "approve": "destructive" believes a server's annotations only with
// "trustAnnotations": true: the greet tool, which its server declares
// read-only, is asked for otherwise (and denied, with no terminal).
func TestMCPApproveDestructiveTrust(t *testing.T) {
	url := greeter(t)
	for _, trust := range []bool{false, true} {
		t.Run(fmt.Sprintf("trust=%v", trust), func(t *testing.T) {
			config := writeMCP(t, fmt.Sprintf(`{"mcpServers": {"web": {"url": %q, "approve": "destructive", "trustAnnotations": %v}}}`, url, trust))
			model := newServer(t, bedrocktest.Script(
				bedrocktest.ToolUse("", bedrocktest.Call{ID: "t_greet", Name: "web__greet", Input: map[string]any{"name": "Ada"}}),
				bedrocktest.Text("Done."),
			))
			out := runInProcess(t, strings.NewReader(""), "-endpoint", model.URL, "-mcp", config, "Greet Ada.")
			require.Equal(t, 0, out.code, out.stderr)
			result := toolResults(t, model.Requests()[1])["t_greet"]
			if trust {
				assert.Equal(t, `"hello Ada"`, resultText(result))
				return
			}
			assert.Equal(t, types.ToolResultStatusError, result.Status)
			assert.Contains(t, resultText(result), "denied")
		})
	}
}

// FuzzParseMCP: what parseMCP accepts, mcptools.Connect accepts too (it fails
// only because its context is cancelled). What it refuses it says in words. A
// server description that only Connect refused ended in "converse: -mcp FILE:
// %!w(<nil>)", exit status 1.
func FuzzParseMCP(f *testing.F) {
	for _, seed := range []string{
		`{"mcpServers":{"":{"url":"http://"}}}`,
		`{"mcpServers": {"a": {"command": "sh", "env": {"A=B": "1"}}}}`,
		`{"mcpServers": {"a": {"url": "http://x"}}} []`,
		`{"mcpServers": {"a": {"url": "https://example.com/mcp", "timeout": "5s", "maxConcurrency": 2, "approve": "destructive", "trustAnnotations": true}}}`,
		`{"servers": {"a": {"command": "sh"}}}`,
	} {
		f.Add([]byte(seed))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, err := parseMCP(data, dir)
		if err != nil {
			assert.NotContains(t, err.Error(), "%!")
			return
		}
		if len(servers) == 0 { // every server disabled
			return
		}
		for i := range servers {
			if len(servers[i].Command) > 0 { // started by Connect: reached instead, which a cancelled context stops
				servers[i].Command, servers[i].URL = nil, "http://127.0.0.1:1"
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = mcptools.Connect(ctx, nil, servers...)
		require.ErrorIs(t, err, context.Canceled, "Connect refused what parseMCP accepted")
	})
}

// TestMCPServerThatFailsToStart: a server that exits at once, or whose program
// is not there, is a failure naming it (exit status 1). A -mcp file that
// cannot be used is a usage error (exit status 2).
func TestMCPServerThatFailsToStart(t *testing.T) {
	tests := []struct {
		name, config, want string
		code               int
	}{
		{"exits at once", `{"mcpServers": {"broken": {"command": "false"}}}`, `the MCP server "broken" could not be started`, 1},
		{"no such program", `{"mcpServers": {"ghost": {"command": "/nonexistent/server"}}}`, `the MCP server "ghost" could not be started: command /nonexistent/server`, 1},
		{"not in PATH", `{"mcpServers": {"ghost": {"command": "no-such-mcp-server-here"}}}`, `the MCP server "ghost" could not be started`, 1},
		{"not JSON", `{"mcpServers": `, "not valid JSON", 2},
		{"unknown field", `{"mcpServers": {"a": {"command": "false", "comand": "x"}}}`, `server "a": unknown field "comand"`, 2},
		// Found by fuzzing: these ended in "%!w(<nil>)", exit status 1.
		{"blank name", `{"mcpServers":{"":{"url":"http://"}}}`, `server "": a server without a name`, 2},
		{"env name with =", `{"mcpServers": {"a": {"command": "false", "env": {"A=B": "1"}}}}`, `server "a": "env" "A=B"`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			config := writeMCP(t, tt.config)
			out := runInProcess(t, nil, "-endpoint", "http://127.0.0.1:1", "-mcp", config, "Hi.")
			assert.Equal(t, tt.code, out.code, out.stderr)
			assert.Contains(t, out.stderr, "converse: -mcp "+config+": ")
			assert.Contains(t, out.stderr, tt.want)
			assert.NotContains(t, out.stderr, "%!")
		})
	}
	t.Run("unreadable", func(t *testing.T) {
		out := runInProcess(t, nil, "-endpoint", "http://127.0.0.1:1", "-mcp", filepath.Join(t.TempDir(), "none.json"), "Hi.")
		assert.Equal(t, 2, out.code, out.stderr)
		assert.Contains(t, out.stderr, "converse: -mcp: ")
	})
}

// TestMCPErrorTextIsPrintable: a server whose tools/list fails with an error
// message holding an escape sequence and control characters is a failure
// naming it. What reaches standard error (a file here, not a terminal) holds
// none of them. No model call is made.
func TestMCPErrorTextIsPrintable(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1"}, nil)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				return nil, errors.New("no tools \x1b[31mtoday\x1b[0m\a\rhidden")
			}
			return next(ctx, method, req)
		}
	})
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(web.Close)
	config := writeMCP(t, `{"mcpServers": {"hostile": {"url": "`+web.URL+`"}}}`)
	model := newServer(t, bedrocktest.Script(bedrocktest.Text("Hi.")))

	out := runInProcess(t, nil, "-endpoint", model.URL, "-mcp", config, "Hi.")
	assert.Equal(t, 1, out.code, out.stderr)
	assert.Contains(t, out.stderr, `the MCP server \"hostile\" refused the call: no tools \x1b[31mtoday`)
	assert.NotContains(t, out.stderr, "\x1b")
	assert.NotContains(t, out.stderr, "\a")
	assert.NotContains(t, out.stderr, "\r")
	assert.Empty(t, model.Requests())
}

// TestMCPHelpExample: the example of "converse help mcp" is a configuration
// with our extensions, each of them described.
func TestMCPHelpExample(t *testing.T) {
	var c mcpConfig
	text := helpExample(t, "mcp", "  }}", &c)
	require.Len(t, c.Servers, 2)
	for _, field := range []string{"command", "url", "timeout", "maxConcurrency", "include", "approve", "trustAnnotations"} {
		assert.Contains(t, text, "\n  "+field+" ", "the help describes %s", field)
	}
}
