package mcptools_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
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

// faulty serves srv over streamable HTTP, answering tools/call as fault says
// instead. fault is "500", "cut" (the connection closed before an answer),
// "cut body" (closed in the middle of one), "400 with a JSON-RPC error" or ""
// (srv answers).
func faulty(t *testing.T, srv *mcp.Server, jsonResponse bool, fault *string) *httptest.Server {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !bytes.Contains(body, []byte(`"tools/call"`)) || *fault == "" {
			h.ServeHTTP(w, r)
			return
		}
		switch *fault {
		case "500":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "400 with a JSON-RPC error":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no such region"}}`))
		case "cut body":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "1000")
			_, _ = w.Write([]byte(`{"jsonrpc":`))
			w.(http.Flusher).Flush()
			fallthrough
		case "cut":
			c, _, err := http.NewResponseController(w).Hijack()
			require.NoError(t, err)
			_ = c.Close()
		}
	}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return ts
}

// A failed HTTP call says what happened on the wire (the SDK says
// "rejected by transport" for all of them), and the next call works.
func TestHTTPFailureSaysWhatHappened(t *testing.T) {
	tests := []struct {
		fault, want string
		is          error
	}{
		{"500", `the call to the MCP server "web" failed: it answered HTTP 500 Internal Server Error; it is reconnected on the next call`, mcptools.ErrUnavailable},
		{"cut", `the call to the MCP server "web" failed: the connection was cut (EOF); it is reconnected on the next call`, mcptools.ErrUnavailable},
		{"cut body", `the call to the MCP server "web" failed: the connection was cut (unexpected EOF); it is reconnected on the next call`, mcptools.ErrUnavailable},
		// The server's own words win over its status.
		{"400 with a JSON-RPC error", `the MCP server "web" refused the call: no such region`, mcptools.ErrToolFailed},
	}
	for _, tt := range tests {
		t.Run(tt.fault, func(t *testing.T) {
			fault := tt.fault
			ts := faulty(t, newTestServer(newFixture(), nil), false, &fault)
			b, reg := connect(t, mcptools.Server{Name: "web", URL: ts.URL})
			t.Cleanup(func() { _ = b.Close() }) // before the server closes: the bridge holds a stream open
			_, err := call(t, reg, "web__echo", `{"text":"x"}`)
			require.ErrorIs(t, err, tt.is)
			assert.EqualError(t, err, tt.want)

			fault = ""
			out, err := call(t, reg, "web__echo", `{"text":"x"}`)
			require.NoError(t, err)
			assert.JSONEq(t, `{"echo":"x"}`, string(out.(json.RawMessage)))
		})
	}
}

// A response longer than MaxResponse fails the call once the limit is
// passed, whether the server answers with JSON or an event stream, and the
// next call works.
func TestHTTPResponseIsBounded(t *testing.T) {
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonResponse), func(t *testing.T) {
			fault := ""
			ts := faulty(t, newTestServer(newFixture(), nil), jsonResponse, &fault)
			b, reg := connect(t, mcptools.Server{Name: "web", URL: ts.URL, MaxResponse: 16 << 10})
			t.Cleanup(func() { _ = b.Close() })
			_, err := call(t, reg, "web__echo", `{"text":"`+strings.Repeat("x", 20<<10)+`"}`)
			require.ErrorIs(t, err, mcptools.ErrToolFailed)
			assert.EqualError(t, err, `the call to the MCP server "web" failed: its response was larger than 16384 bytes, the limit; it is reconnected on the next call`)

			out, err := call(t, reg, "web__echo", `{"text":"`+strings.Repeat("x", 6<<10)+`"}`)
			require.NoError(t, err, "under the limit (the result is sent twice: as text and structured)")
			assert.Len(t, out.(json.RawMessage), len(`{"echo":""}`)+6<<10)
		})
	}
}
