package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// deployer serves, on loopback, an official go-sdk MCP server whose deploy
// tool asks the user where to deploy (an input-required result), with a
// hostile message, and returns its -mcp configuration. A stateless
// handler speaks the 2026-07-28 protocol, whose results carry the
// question; a stateful one an earlier protocol, where the SDK asks with
// an elicitation/create request.
func deployer(t *testing.T, stateless bool) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "ops", Version: "1"}, nil)
	schema := map[string]any{"type": "object", "required": []any{"env"},
		"properties": map[string]any{"env": map[string]any{"type": "string", "enum": []any{"staging", "production"}}}}
	mcp.AddTool(srv, &mcp.Tool{Name: "deploy", Description: "Deploys."}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		resp, ok := req.Params.InputResponses["where"].(*mcp.ElicitResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"where": &mcp.ElicitParams{Message: "Deploy where?\x1b[2J", RequestedSchema: schema}},
				RequestState: "deploy-1"}, nil, nil
		}
		text := "the user chose " + resp.Action
		if resp.Action == "accept" {
			text = "deployed to " + resp.Content["env"].(string)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
	t.Cleanup(web.Close)
	return writeMCP(t, `{"mcpServers": {"ops": {"url": "`+web.URL+`"}}}`)
}

func deployModel(t *testing.T) *bedrocktest.Server {
	return newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "ops__deploy", Input: map[string]any{}}),
		bedrocktest.Text("Done."),
	))
}

// runAtTerminal runs converse with a pseudo-terminal as its controlling
// terminal (/dev/tty, where it asks), typed, and standard input empty (no
// chat). Once converse has printed want n times, it returns what converse
// printed there and its standard error.
func runAtTerminal(t *testing.T, typed, want string, n int, args ...string) (term, stderr string) {
	t.Helper()
	tty, keyboard := openTerminal(t)
	screen := newWatched()
	go io.Copy(screen, keyboard) // ends when the test closes the terminal
	_, err := keyboard.WriteString(typed)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, testEnv(t), args...)
	cmd.ExtraFiles = []*os.File{tty}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3} // the tty, its first extra file
	var stdout, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &errs
	require.NoError(t, cmd.Run(), errs.String())
	checkRace(t, 0, errs.String())
	assert.Equal(t, "Done.\n", stdout.String())
	screen.waitFor(t, want, n)
	return screen.String(), errs.String()
}

// TestQuestionAtTerminal answers an MCP server's question at the terminal:
// an answer that breaks the schema is asked again and never sent, and the
// server's message is shown escaped.
func TestQuestionAtTerminal(t *testing.T) {
	t.Parallel()
	for _, stateless := range []bool{true, false} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			t.Parallel()
			model := deployModel(t)
			term, stderr := runAtTerminal(t, "a\nmoon\nstaging\n", "env (", 2, "-endpoint", model.URL, "-mcp", deployer(t, stateless), "Deploy it.")
			assert.Contains(t, term, `"ops__deploy" asks: "Deploy where?\x1b[2J" [a]nswer, [d]ecline or [c]ancel? `)
			assert.NotContains(t, term, "\x1b[2J", "the server's escape sequence is not written")
			assert.Contains(t, term, "  env (one of staging, production; required): ")
			assert.Contains(t, stderr, "; answer again.")
			reqs := model.Requests()
			require.Len(t, reqs, 2)
			assert.Equal(t, `"deployed to staging"`, resultText(toolResults(t, reqs[1])["t1"]))
		})
	}
}

// TestQuestionPausesWithoutTerminal: with no terminal a question pauses a
// -session run (exit 6), and the next run on the session, at a terminal,
// asks it; without -session it is cancelled.
func TestQuestionPausesWithoutTerminal(t *testing.T) {
	t.Parallel()
	config := deployer(t, false)
	session := filepath.Join(t.TempDir(), "session.json")
	model := deployModel(t)
	noTTY := func(args ...string) outcome {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := binaryCommand(ctx, testEnv(t), args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal
		return runCommand(t, cmd)
	}
	out := noTTY("-endpoint", model.URL, "-mcp", config, "-session", session, "Deploy it.")
	require.Equal(t, exitPaused, out.code, out.stderr)
	assert.Contains(t, out.stderr, `ops__deploy (t1) asks "Deploy where?\x1b[2J"`)
	assert.NotContains(t, out.stderr, "\x1b[2J")
	assert.Contains(t, out.stderr, "run converse -session "+session+" again at a terminal to answer")

	out = noTTY("-endpoint", model.URL, "-mcp", config, "-session", session)
	require.Equal(t, exitPaused, out.code, "still no terminal: still paused\n%s", out.stderr)

	_, _ = runAtTerminal(t, "d\n", "[c]ancel? ", 1, "-endpoint", model.URL, "-mcp", config, "-session", session)
	reqs := model.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, `"the user chose decline"`, resultText(toolResults(t, reqs[1])["t1"]))

	cancelled := deployModel(t)
	out = noTTY("-endpoint", cancelled.URL, "-mcp", config, "Deploy it.")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, `"the user chose cancel"`, resultText(toolResults(t, cancelled.Requests()[1])["t1"]))
	assert.True(t, strings.HasSuffix(out.stdout, "Done.\n"))
}

// TestServeQuestion: converse serve -yes approves calls but answers no
// question: the invocation pauses with it, and the next one answers it.
func TestServeQuestion(t *testing.T) {
	setTestEnv(t)
	model := deployModel(t)
	s := startServe(t, "-endpoint", model.URL, "-sessions", t.TempDir(), "-mcp", deployer(t, false), "-yes")
	const session = "0123456789abcdef0123456789abcdef-ask"
	paused := s.invoke(t, session, `{"prompt": "Deploy it."}`)
	require.Equal(t, "paused", paused["status"], "%v", paused)
	pending := paused["pending"].([]any)[0].(map[string]any)
	assert.Equal(t, "Deploy where?\x1b[2J", pending["question"].(map[string]any)["message"])
	done := s.invoke(t, session, `{"decisions": [{"toolUseId": "t1", "verdict": "accepted", "answer": {"env": "production"}}]}`)
	assert.Equal(t, "Done.", done["response"])
	assert.Equal(t, `"deployed to production"`, resultText(toolResults(t, model.Requests()[1])["t1"]))
}
