package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/agentcore"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// answered is an invocation's answer: its HTTP status, Retry-After and
// JSON body.
type answered struct {
	code       int
	retryAfter string
	body       map[string]any
}

// invokeAsync invokes in a goroutine; the channel gets its answer.
func (s *served) invokeAsync(session, body string) <-chan answered {
	done := make(chan answered, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, s.url+"/invocations", strings.NewReader(body))
		req.Header.Set(agentcore.SessionHeader, session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- answered{body: map[string]any{"error": err.Error()}}
			return
		}
		defer resp.Body.Close()
		a := answered{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
		_ = json.NewDecoder(resp.Body).Decode(&a.body)
		done <- a
	}()
	return done
}

// TestServeShutdownLetsInvocationsFinish: on the signal, serve takes no
// more connections, but an invocation whose tool runs is not cut off: its
// tool, released within -shutdown-timeout, answers, and so does the
// invocation, with 200.
func TestServeShutdownLetsInvocationsFinish(t *testing.T) {
	setTestEnv(t)
	manifest, gate := awaitManifest(t)
	bed := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "w1", Name: "wait"}),
		bedrocktest.Text("Done."),
	))
	s := startServe(t, "-endpoint", bed.URL, "-sessions", t.TempDir(), "-tools", manifest, "-no-builtins", "-shutdown-timeout", "1m")
	done := s.invokeAsync("0123456789abcdef0123456789abcdef-cli", `{"prompt": "Wait."}`)
	open, err := os.OpenFile(gate, os.O_WRONLY, 0) // returns once the tool runs
	require.NoError(t, err)
	defer open.Close()

	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }() // as main does on SIGTERM
	addr := strings.TrimPrefix(s.url, "http://")
	for { // the server is shutting down once it takes no connection
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		time.Sleep(10 * time.Millisecond)
	}
	_, err = io.WriteString(open, "opened\n")
	require.NoError(t, err, "the tool still runs")
	require.NoError(t, open.Close())

	a := <-done
	assert.Equal(t, http.StatusOK, a.code, "%v", a.body)
	assert.Equal(t, "Done.", a.body["response"])
	require.NoError(t, <-stopped)
}

// TestServeShutdownCutsOffAfterTheGrace: an invocation still running once
// -shutdown-timeout has passed is cut off: it answers 503 with Retry-After
// saying the server is stopping, and serve returns once its tool's program
// is gone.
func TestServeShutdownCutsOffAfterTheGrace(t *testing.T) {
	setTestEnv(t)
	manifest, pipe := hangManifest(t, filepath.Join(t.TempDir(), "marks"))
	bed := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "h1", Name: "hang"}),
	))
	s := startServe(t, "-endpoint", bed.URL, "-sessions", t.TempDir(), "-tools", manifest, "-no-builtins", "-shutdown-timeout", "100ms")
	done := s.invokeAsync("0123456789abcdef0123456789abcdef-cli", `{"prompt": "Hang."}`)
	line := make([]byte, 32)
	n, err := pipe.Read(line) // the tool runs
	require.NoError(t, err)
	tool, err := strconv.Atoi(strings.TrimSpace(string(line[:n])))
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Kill(tool, syscall.SIGKILL) })

	require.NoError(t, s.stop())
	assert.True(t, gone(tool), "the tool's program is gone once serve returns")
	a := <-done
	assert.Equal(t, http.StatusServiceUnavailable, a.code, "%v", a.body)
	assert.NotEmpty(t, a.retryAfter)
	assert.Equal(t, "error", a.body["status"])
	assert.Contains(t, a.body["error"], "the server is stopping")

	help := runInProcess(t, nil, "serve", "-h")
	assert.Contains(t, help.stdout, "-shutdown-timeout", "serve -h says so")
}
