package converse_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/tools"
)

// TestStopEndsTheTask: a task left open (cancelled in its tool round, paused
// for approval, or cut off by a crash) refuses a new prompt until Stop ends
// it. Stop answers the open calls in plain words, never running them, and
// saves the stop. The next Send's prompt is then the next request's last
// message, after the stopped results. For a model that takes no text beside
// tool results, it comes after an assistant message between. The history stays
// one Bedrock accepts throughout.
func TestStopEndsTheTask(t *testing.T) {
	mistral := "mistral.mistral-large-2407-v1:0"
	cases := []struct {
		name   string
		model  string
		open   func(t *testing.T, client converse.Client, model string, reg *tools.Registry, opts func(*converse.Options)) *converse.Conversation
		result string // the text of the stopped call's result
		ran    int    // runs of the tool, at most
	}{
		{"cancelled in its tool round", claude, cancelled, `Error: the task was stopped while tool "work" ran; it may or may not have taken effect`, 1},
		{"cancelled, a model without text beside results", mistral, cancelled, `Error: the task was stopped while tool "work" ran; it may or may not have taken effect`, 1},
		{"paused for approval", claude, paused, "Error: the call was not run: the user stopped the task", 0},
		{"cut off by a crash", claude, crashed, "Error: the call was stopped while it ran: the user stopped the task; it may or may not have taken effect", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, client := serve(t, bedrocktest.Script(
				bedrocktest.ToolUse("", bedrocktest.Call{ID: "w1", Name: "work", Input: map[string]any{}}),
				bedrocktest.Text("Something else, then."),
			))
			var runs atomic.Int32
			reg := workTool(t, &runs)
			store := filestore.Store{Dir: t.TempDir()}
			var ends []converse.ToolEnd
			opts := func(o *converse.Options) {
				o.Session = &converse.Session{Store: store, ID: "s"}
				o.OnEvent = func(ev converse.Event) {
					if e, ok := ev.(converse.ToolEnd); ok {
						ends = append(ends, e)
					}
				}
			}
			c := tc.open(t, client, tc.model, reg, opts)
			_, err := c.Send(context.Background(), "never mind")
			require.Error(t, err, "an open task refuses a new prompt")
			assert.True(t, errors.Is(err, converse.ErrInterrupted) || errors.Is(err, converse.ErrPaused), "%v", err)

			require.NoError(t, c.Stop(context.Background()))
			st, err := store.Load(context.Background(), "s")
			require.NoError(t, err)
			assert.True(t, st.Stopped, "the stop is saved")
			assert.Empty(t, st.Pending)
			h := c.History()
			got := resultsOf(t, h[len(h)-1])
			require.Len(t, got, 1)
			status := types.ToolResultStatusError
			if tc.model == mistral { // takes no status field
				status = ""
			}
			assert.Equal(t, result{ID: "w1", Text: tc.result, Status: status}, got[0])
			assertValid(t, c, tc.model)
			require.NoError(t, c.Stop(context.Background()), "a stopped task stops again as a no-op")
			assert.Equal(t, h, c.History())

			res, err := c.Send(context.Background(), "Something else.")
			require.NoError(t, err)
			assert.Equal(t, "Something else, then.", res.Text)
			// A cancelled call may still be returning; none runs again.
			assert.LessOrEqual(t, int(runs.Load()), tc.ran, "a stopped call is never run (again)")
			reqs := srv.Requests()
			msgs := reqs[len(reqs)-1].Messages
			if tc.model == mistral {
				last := msgs[len(msgs)-1]
				require.Len(t, last.Content, 1)
				assert.Equal(t, "Something else.", last.Content[0].(*types.ContentBlockMemberText).Value)
				assert.Equal(t, types.ConversationRoleAssistant, msgs[len(msgs)-2].Role)
				assert.Len(t, resultsOf(t, msgs[len(msgs)-3]), 1)
			} else {
				requirePromptAfterResults(t, reqs[len(reqs)-1], 1, "Something else.")
			}
			assert.False(t, c.State().Stopped, "a new task")
			st, err = store.Load(context.Background(), "s")
			require.NoError(t, err)
			assert.False(t, st.Stopped, "the new task is saved")
			assertValid(t, c, tc.model)
			if tc.ran == 0 {
				require.NotEmpty(t, ends)
				assert.ErrorIs(t, ends[len(ends)-1].Err, converse.ErrStopped)
			}
		})
	}
}

// TestStopIdle: Stop of a conversation with no open task changes nothing
// and saves nothing.
func TestStopIdle(t *testing.T) {
	_, client := serve(t, bedrocktest.Script(bedrocktest.Text("Hi.")))
	c := converse.New(client, claude, nil)
	require.NoError(t, c.Stop(context.Background()))
	_, err := c.Send(context.Background(), "Hello")
	require.NoError(t, err)
	before := c.State()
	require.NoError(t, c.Stop(context.Background()))
	assert.Equal(t, before, c.State())
	assert.False(t, c.State().Stopped)
}

// requirePromptAfterResults requires the last message of req to be n tool
// results, then the text prompt: a stopped task's next prompt.
func requirePromptAfterResults(t *testing.T, req *bedrocktest.Request, n int, prompt string) {
	t.Helper()
	last := req.Messages[len(req.Messages)-1]
	require.Equal(t, types.ConversationRoleUser, last.Role)
	require.Len(t, last.Content, n+1, "the results, then the prompt")
	assert.Len(t, results(t, last.Content[:n]), n)
	assert.Equal(t, prompt, last.Content[n].(*types.ContentBlockMemberText).Value)
}

// workTool is a tool named work that counts its runs.
func workTool(t *testing.T, runs *atomic.Int32) *tools.Registry {
	t.Helper()
	work, err := tools.New("work", "Does some work.", func(ctx context.Context, _ struct{}) (string, error) {
		runs.Add(1)
		if err := ctx.Err(); err != nil {
			return "", err
		}
		return "worked", nil
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(work)
	require.NoError(t, err)
	return reg
}

// cancelled leaves the conversation's task cancelled in its tool round, as
// a driver stopping it does (ErrStopped the cause): the call ran and was
// answered as stopped, and the model has not seen it.
func cancelled(t *testing.T, client converse.Client, model string, reg *tools.Registry, opts func(*converse.Options)) *converse.Conversation {
	ctx, cancel := context.WithCancelCause(context.Background())
	c := converse.New(client, model, reg, opts, func(o *converse.Options) {
		o.Tools.Middleware = []converse.ToolMiddleware{func(next converse.ToolHandler) converse.ToolHandler {
			return func(ctx context.Context, call converse.Call) (any, error) {
				cancel(converse.ErrStopped)
				return next(ctx, call)
			}
		}}
	})
	_, err := c.Send(ctx, "work")
	require.ErrorIs(t, err, context.Canceled)
	return c
}

// paused leaves the conversation's task paused: its call awaits approval.
func paused(t *testing.T, client converse.Client, model string, reg *tools.Registry, opts func(*converse.Options)) *converse.Conversation {
	c := converse.New(client, model, reg, opts, func(o *converse.Options) { o.ApprovalPolicy = func(converse.Call) bool { return true } })
	_, err := c.Send(context.Background(), "work")
	require.ErrorIs(t, err, converse.ErrPaused)
	return c
}

// crashed leaves the conversation's task as a crash does: its call marked
// started, with no result, in the saved state the conversation is restored
// from.
func crashed(t *testing.T, client converse.Client, model string, reg *tools.Registry, opts func(*converse.Options)) *converse.Conversation {
	st := paused(t, client, model, reg, opts).State()
	b, err := json.Marshal(st)
	require.NoError(t, err)
	var form map[string]any
	require.NoError(t, json.Unmarshal(b, &form))
	form["openTurn"] = map[string]any{"results": []any{}, "answered": []any{}, "pending": []any{}, "started": true}
	b, err = json.Marshal(form)
	require.NoError(t, err)
	var back converse.State
	require.NoError(t, json.Unmarshal(b, &back))
	back.Revision = st.Revision
	r, err := converse.Restore(client, reg, &back, opts)
	require.NoError(t, err)
	return r
}
