package agentcore_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/agentcore"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
)

// TestLongSessionIDs: the runtime's session ids go up to 256 characters;
// a filestore.Store keeps those past 200 under a hash of the id, so that
// its files' names fit, and the session goes on.
func TestLongSessionIDs(t *testing.T) {
	for _, n := range []int{200, 240, 256} {
		id := strings.Repeat("s", n)
		bed := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("one"), bedrocktest.Text("two")))
		dir := t.TempDir()
		f := serve(t, bed, registry(t), dir)
		assert.Equal(t, "one", f.call(id, `{"prompt": "first"}`, http.StatusOK).Response, "%d characters", n)
		second := f.call(id, `{"prompt": "second"}`, http.StatusOK)
		assert.Equal(t, "two", second.Response)
		assert.Equal(t, id, second.SessionID)
		assert.Len(t, bed.Requests()[1].Messages, 3, "the session went on")
		if n > 200 {
			_, err := (filestore.Store{Dir: dir}).Load(context.Background(), id[:200])
			require.ErrorIs(t, err, os.ErrNotExist, "not cut short: under its hash")
		}
		bed.Close()
	}
}

// TestNoPathInAnswers: a 500 answer, whose error may hold the server's
// paths, sends the caller to the server's log, which has the error.
func TestNoPathInAnswers(t *testing.T) {
	bed := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("Hi.")))
	defer bed.Close()
	notADir := filepath.Join(t.TempDir(), "sessions")
	require.NoError(t, os.WriteFile(notADir, nil, 0o600))
	var logs syncBuffer
	f := serve(t, bed, registry(t), notADir, func(o *agentcore.Options) {
		o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	for _, body := range []string{`{"prompt": "hi"}`, `{"prompt": "hi", "stream": true}`} {
		a := f.call(session, body, http.StatusInternalServerError)
		assert.NotContains(t, a.Error, notADir)
		assert.Contains(t, a.Error, "the server's log says why")
	}
	recs := logs.records(t)
	require.Len(t, recs, 2)
	assert.Contains(t, recs[0]["error"], notADir, "the log has the whole error")
}

// TestUnknownFieldsAreIgnored: a caller's own fields in the body do not
// refuse it; they are named in a Debug record.
func TestUnknownFieldsAreIgnored(t *testing.T) {
	bed := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("Hello.")))
	defer bed.Close()
	var logs syncBuffer
	f := serve(t, bed, registry(t), t.TempDir(), func(o *agentcore.Options) {
		o.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	a := f.call(session, `{"prompt": "Hi", "metadata": {"user": "u1", "tags": [1, 2]}, "trace": "x"}`, http.StatusOK)
	assert.Equal(t, "Hello.", a.Response)
	recs := logs.records(t)
	require.Len(t, recs, 2)
	assert.Equal(t, "DEBUG", recs[0]["level"])
	assert.Equal(t, "metadata, trace", recs[0]["fields"])
}
