package agentcore_test

import (
	"context"
	"encoding/json"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/agentcore"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/tools"
)

// two asks for 2 + 2 in call id.
func two(id string) *bedrocktest.Reply {
	return bedrocktest.ToolUse("Adding.", bedrocktest.Call{ID: id, Name: "add", Input: map[string]any{"a": 2, "b": 2}})
}

// once makes the SDK's client give up after one attempt.
func once(o *bedrockruntime.Options) { o.Retryer = retry.AddWithMaxAttempts(o.Retryer, 1) }

// TestOutcomesOverTheContract: each converse.Outcome has its HTTP status and
// "status" (the table of package converse's doc), in a JSON answer and as
// the last event of a stream. A limit, a pause and a stop are no 5xx.
func TestOutcomesOverTheContract(t *testing.T) {
	stop := func(o *converse.Options) {
		o.PrepareTurn = func(_ context.Context, t *converse.TurnPlan) error {
			if len(t.Answered) > 0 {
				return converse.ErrStopped
			}
			return nil
		}
	}
	for _, tc := range []struct {
		name    string
		replies func() bedrocktest.Handler
		conv    func(*converse.Options)
		tool    func(*tools.Options)
		code    int
		status  string
		limit   string
	}{
		{name: "answer", replies: func() bedrocktest.Handler { return bedrocktest.Script(bedrocktest.Text("4")) },
			code: http.StatusOK, status: "success"},
		{name: "turn limit", replies: func() bedrocktest.Handler { return bedrocktest.Script(two("t1"), two("t2")) },
			conv: func(o *converse.Options) { o.MaxTurns = 2 }, code: http.StatusOK, status: "limit", limit: "turns"},
		{name: "budget", replies: func() bedrocktest.Handler { return bedrocktest.Script(two("t1"), two("t2")) },
			conv: func(o *converse.Options) { o.Budget = &converse.Budget{Send: converse.Limits{ToolCalls: 1}} },
			code: http.StatusOK, status: "limit", limit: "tool calls"},
		{name: "paused", replies: func() bedrocktest.Handler { return bedrocktest.Script(two("t1")) },
			tool: func(o *tools.Options) { o.RequireApproval = true }, code: http.StatusOK, status: "paused"},
		{name: "stopped", replies: func() bedrocktest.Handler { return bedrocktest.Script(two("t1")) },
			conv: stop, code: http.StatusOK, status: "stopped"},
		{name: "throttled", replies: func() bedrocktest.Handler { return bedrocktest.Fail(1, bedrocktest.Throttling(), nil) },
			code: http.StatusServiceUnavailable, status: "error"},
		{name: "access denied", replies: func() bedrocktest.Handler { return bedrocktest.Fail(1, bedrocktest.AccessDenied("no"), nil) },
			code: http.StatusBadGateway, status: "error"},
	} {
		for _, stream := range []bool{false, true} {
			name := tc.name
			body := `{"prompt": "What is 2 + 2?"}`
			if stream {
				name, body = name+" in a stream", `{"prompt": "What is 2 + 2?", "stream": true}`
			}
			t.Run(name, func(t *testing.T) {
				bed := bedrocktest.NewServer(tc.replies())
				defer bed.Close()
				var runs atomic.Int32
				var toolOpts []func(*tools.Options)
				if tc.tool != nil {
					toolOpts = append(toolOpts, tc.tool)
				}
				f := serveClient(t, bed.Client(once), registry(t, adder(t, &runs, toolOpts...)), tc.conv)
				var a answer
				if stream && tc.code == http.StatusOK {
					resp := f.invoke(context.Background(), session, body)
					defer resp.Body.Close()
					require.Equal(t, http.StatusOK, resp.StatusCode)
					evs := events(t, resp.Body)
					a = evs[len(evs)-1]
					want := tc.status
					if want == "success" {
						want = "result"
					}
					assert.Equal(t, want, a.Type, "the last event")
				} else {
					resp := f.invoke(context.Background(), session, body)
					defer resp.Body.Close()
					assert.Equal(t, tc.code, resp.StatusCode)
					if tc.code == http.StatusServiceUnavailable {
						assert.NotEmpty(t, resp.Header.Get("Retry-After"))
					}
					a = decode(t, resp)
				}
				assert.Equal(t, tc.status, a.Status)
				assert.Equal(t, tc.limit, a.Limit)
				if tc.status != "error" {
					assert.Positive(t, a.Usage["totalTokens"], "what was spent is in the answer")
					assert.NotEmpty(t, a.Response)
				}
			})
		}
	}
}

// TestSessionGoesOnAfterALimit: after an invocation that ended at a limit
// (200, "limit", with the text and usage so far), the task is stopped. The
// next invocation's prompt is the next request's last message, beside the
// stopped task's results. Nothing is resumed first. A call the limit
// stopped is never run.
func TestSessionGoesOnAfterALimit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replies []*bedrocktest.Reply
		conv    func(*converse.Options)
		limit   string
		runs    int32 // the tool calls run in all
	}{
		{
			name:    "turn limit",
			replies: []*bedrocktest.Reply{two("t1"), two("t2"), bedrocktest.Text("Hello.")},
			conv:    func(o *converse.Options) { o.MaxTurns = 2 },
			limit:   "turns", runs: 1,
		},
		{
			name:    "turn limit at the first call",
			replies: []*bedrocktest.Reply{two("t1"), bedrocktest.Text("Hello.")},
			conv:    func(o *converse.Options) { o.MaxTurns = 1 },
			limit:   "turns", runs: 0,
		},
		{
			name:    "budget",
			replies: []*bedrocktest.Reply{two("t1"), two("t2"), bedrocktest.Text("Hello.")},
			conv:    func(o *converse.Options) { o.Budget = &converse.Budget{Send: converse.Limits{ToolCalls: 1}} },
			limit:   "tool calls", runs: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bed := bedrocktest.NewServer(bedrocktest.Script(tc.replies...))
			defer bed.Close()
			var runs atomic.Int32
			f := serveClient(t, bed.Client(once), registry(t, adder(t, &runs)), tc.conv)

			limited := f.call(session, `{"prompt": "What is 2 + 2?"}`, http.StatusOK)
			assert.Equal(t, "limit", limited.Status)
			assert.Equal(t, tc.limit, limited.Limit)
			assert.Equal(t, "Adding.", limited.Response, "the text so far")
			assert.Equal(t, "tool_use", limited.StopReason)
			assert.Positive(t, limited.Usage["totalTokens"])
			assert.Contains(t, limited.Message, "reached")

			sent := len(bed.Requests())
			next := f.call(session, `{"prompt": "Hi."}`, http.StatusOK)
			assert.Equal(t, "success", next.Status)
			assert.Equal(t, "Hello.", next.Response)
			assert.Nil(t, next.Resumed, "nothing to resume: the task was stopped")
			reqs := bed.Requests()
			require.Len(t, reqs, sent+1, "one model call: the prompt's")
			msgs := reqs[sent].Messages
			last := msgs[len(msgs)-1].Content
			assert.Equal(t, "Hi.", last[len(last)-1].(*types.ContentBlockMemberText).Value, "the prompt is the request's last message")
			assert.Equal(t, tc.runs, runs.Load())
		})
	}
}

// decode decodes a JSON answer.
func decode(t *testing.T, resp *http.Response) answer {
	t.Helper()
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var a answer
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
	return a
}

// TestInterruptedSessionIsResumedFirst: a session that a failure left
// interrupted after a tool round (Bedrock throttled: 503, "error") is
// resumed before the next prompt, and that Resume's text and usage are in
// the answer's "resumed".
func TestInterruptedSessionIsResumedFirst(t *testing.T) {
	var n atomic.Int32
	script := bedrocktest.Script(two("t1"), bedrocktest.Text("It is 4."), bedrocktest.Text("Hello."))
	bed := bedrocktest.NewServer(bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		if n.Add(1) == 2 {
			return nil, bedrocktest.Throttling()
		}
		return script.ServeConverse(ctx, req)
	}))
	defer bed.Close()
	var runs atomic.Int32
	f := serveClient(t, bed.Client(once), registry(t, adder(t, &runs)), nil)

	failed := f.call(session, `{"prompt": "What is 2 + 2?"}`, http.StatusServiceUnavailable)
	assert.Equal(t, "error", failed.Status)
	next := f.call(session, `{"prompt": "Hi."}`, http.StatusOK)
	assert.Equal(t, "Hello.", next.Response)
	require.NotNil(t, next.Resumed, "the interrupted task was resumed first")
	assert.Equal(t, "It is 4.", next.Resumed.Response)
	assert.Positive(t, next.Resumed.Usage["totalTokens"])
	assert.Equal(t, int32(1), runs.Load(), "no call ran twice")
}

// serveClient starts a Handler with client, its sessions in a directory
// of the test and each conversation set by conv, if not nil.
func serveClient(t *testing.T, client *bedrockruntime.Client, reg *tools.Registry, conv func(*converse.Options)) *front {
	t.Helper()
	dir := t.TempDir()
	h := agentcore.New(client, model, reg, func(o *agentcore.Options) {
		o.Store = filestore.Store{Dir: dir}
		o.Conversation = conv
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &front{t: t, url: srv.URL}
}
