package agentcore_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/agentcore"
	"github.com/tooluse/bedrock/converse/filestore"
)

// TestStop: Stop cuts off an invocation blocked in a tool, which answers
// 503 with Retry-After saying the server is stopping, and refuses the next
// invocation alike. The conversation cut off keeps its steps: a server
// started again on its sessions resumes it.
func TestStop(t *testing.T) {
	bed := cutOff()
	defer bed.Close()
	started, gate, cancelled := make(chan struct{}, 1), make(chan struct{}), make(chan error, 1)
	dir := t.TempDir()
	h := agentcore.New(bed.Client(), model, registry(t, gated(t, started, gate, cancelled)), func(o *agentcore.Options) {
		o.Store = filestore.Store{Dir: dir}
		o.Logger = slog.New(slog.DiscardHandler)
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	f := &front{t: t, url: srv.URL}

	answered := make(chan *http.Response, 1)
	go func() { answered <- f.invoke(context.Background(), session, `{"prompt": "Go slowly."}`) }()
	<-started
	h.Stop()
	require.ErrorIs(t, <-cancelled, context.Canceled, "the tool's context ended with Stop")
	stopping := func(resp *http.Response) {
		t.Helper()
		defer resp.Body.Close()
		var a answer
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%+v", a)
		assert.NotEmpty(t, resp.Header.Get("Retry-After"))
		assert.Equal(t, "error", a.Status)
		assert.Contains(t, a.Error, "the server is stopping")
	}
	stopping(<-answered)
	stopping(f.invoke(context.Background(), session+"-next", `{"prompt": "Hi."}`))

	again := serve(t, bed, registry(t, gated(t, started, gate, cancelled)), dir)
	a := again.call(session, `{"prompt": "Are you there?"}`, http.StatusOK)
	assert.Equal(t, "Hello again.", a.Response)
	require.NotNil(t, a.Resumed, "the conversation cut off was interrupted, and resumed first")
	assert.Equal(t, "Sorry, the call was cut off.", a.Resumed.Response)
}
