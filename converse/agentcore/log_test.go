package agentcore_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/agentcore"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// syncBuffer is a bytes.Buffer that a handler's goroutines may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// records are the JSON records written so far.
func (s *syncBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		out = append(out, rec)
	}
	return out
}

// TestEachInvocationIsLogged: every invocation, failed or not, is one
// record of Options.Logger with its session, status, duration, turns,
// tokens, cost and, for a failure, the error's class and message; the
// answer carries the cost too.
func TestEachInvocationIsLogged(t *testing.T) {
	bed := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("Hello.")))
	defer bed.Close()
	var logs syncBuffer
	f := serve(t, bed, registry(t), t.TempDir(), func(o *agentcore.Options) {
		o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	ok := f.call(session, `{"prompt": "Hi"}`, http.StatusOK)
	assert.Positive(t, ok.CostUSD, "the answer carries the cost")
	f.call(session+"\u202e", `{"prompt": "Hi"}`, http.StatusBadRequest)
	f.call(session, `{"prompt": "Hi"}`, http.StatusBadGateway) // the script is spent: a ValidationException

	recs := logs.records(t)
	require.Len(t, recs, 3)
	assert.Equal(t, "INFO", recs[0]["level"])
	assert.Equal(t, session, recs[0]["session"])
	assert.EqualValues(t, 200, recs[0]["code"])
	assert.Equal(t, "success", recs[0]["status"])
	assert.EqualValues(t, 1, recs[0]["turns"])
	assert.Contains(t, recs[0], "inputTokens")
	assert.Contains(t, recs[0], "duration")
	assert.InDelta(t, ok.CostUSD, recs[0]["costUSD"], 1e-12)
	assert.NotContains(t, recs[0], "error")

	assert.Equal(t, "WARN", recs[1]["level"])
	assert.Equal(t, strconv.Quote(session+"\u202e"), recs[1]["session"], "a caller's id is logged printable")
	assert.Equal(t, "request", recs[1]["errorClass"])
	assert.Contains(t, recs[1]["error"], "header "+agentcore.SessionHeader)

	assert.Equal(t, "ERROR", recs[2]["level"])
	assert.EqualValues(t, 502, recs[2]["code"])
	assert.Equal(t, "caller", recs[2]["errorClass"])
	assert.Contains(t, recs[2]["error"], "ValidationException")
}
