package mcptools_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/mcptools"
)

// stdio describes the test binary run as an MCP server over stdio.
func stdio(t *testing.T, name string) mcptools.Server {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return mcptools.Server{Name: name, Command: []string{exe}, Env: map[string]string{serverEnv: "1"}}
}

// pid calls the server's pid tool.
func pid(t *testing.T, reg *tools.Registry, name string) int {
	t.Helper()
	out, err := call(t, reg, name, `{}`)
	require.NoError(t, err)
	var res struct{ PID int }
	require.NoError(t, json.Unmarshal(out.(json.RawMessage), &res))
	require.NotZero(t, res.PID)
	return res.PID
}

func TestStdioServerThatDiesIsRestarted(t *testing.T) {
	_, reg := connect(t, stdio(t, "proc"))
	first := pid(t, reg, "proc__pid")
	require.NotEqual(t, os.Getpid(), first)

	_, err := call(t, reg, "proc__die", `{}`)
	require.ErrorIs(t, err, mcptools.ErrUnavailable, "the call that needed the server")
	assert.Contains(t, err.Error(), `the MCP server "proc" broke off the call (EOF); it is reconnected on the next call`)

	second := pid(t, reg, "proc__pid")
	assert.NotEqual(t, first, second, "a new process")
	assert.False(t, running(first))
}

func TestCloseStopsAndReapsEveryProcess(t *testing.T) {
	reg := new(tools.Registry)
	b, err := mcptools.Connect(t.Context(), reg, stdio(t, "one"), stdio(t, "two"))
	require.NoError(t, err)
	pids := []int{pid(t, reg, "one__pid"), pid(t, reg, "two__pid")}
	require.NoError(t, b.Close())
	for _, p := range pids {
		assert.False(t, running(p), "process %d after Close", p)
	}
	require.NoError(t, b.Close(), "Close is idempotent")
	_, err = call(t, reg, "one__pid", `{}`)
	require.ErrorIs(t, err, mcptools.ErrUnavailable)
	assert.EqualError(t, err, `the MCP server "one" has been shut down`)
}

func TestStdioServerGetsAMinimalEnvironment(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "not for servers")
	s := stdio(t, "proc")
	s.Env["EXTRA"] = "1"
	s.Include = []string{"env"}
	_, reg := connect(t, s)
	out, err := call(t, reg, "proc__env", `{}`)
	require.NoError(t, err)
	env := out.(string)
	assert.Contains(t, env, "EXTRA=1")
	assert.NotContains(t, env, "AWS_SECRET_ACCESS_KEY")
}

func TestStreamableHTTP(t *testing.T) {
	f := newFixture()
	srv := newTestServer(f, nil)
	var authorized, requests atomic.Int32
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("Authorization") == "Bearer secret" {
			authorized.Add(1)
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	defer ts.Close()
	defer ts.CloseClientConnections()

	b, reg := connect(t, mcptools.Server{Name: "web", URL: ts.URL, HTTPClient: ts.Client(),
		Headers: map[string]string{"Authorization": "Bearer secret"}})
	out, err := call(t, reg, "web__echo", `{"text":"over http"}`)
	require.NoError(t, err)
	assert.JSONEq(t, `{"echo":"over http"}`, string(out.(json.RawMessage)))
	out, err = call(t, reg, "web__content", `{"kind":"image"}`)
	require.NoError(t, err)
	assert.Equal(t, tools.Result{Output: "a chart", Media: []tools.Media{{Type: "image/png", Data: onePixelPNG}}}, out)
	require.NoError(t, b.Close())
	assert.Positive(t, requests.Load())
	assert.Equal(t, requests.Load(), authorized.Load(), "every request has the header")
}
