package servertest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	ctemporal "github.com/tooluse/bedrock/converse/temporal"
	"github.com/tooluse/bedrock/tools"
)

// TestReplayDecidesAsTheRun runs workflows on the real server, then
// replays each one's history with the SDK's WorkflowReplayer, as a worker
// that picks a run up does: the replay must make the same commands. The
// runs cover what a step decides from outside its input. One is a
// Budget's wall time that fires after a slow tool, decided by the
// workflow's clock, not the process's. One is a call paused for approval
// and decided by signal. One is a task that PrepareTurn stops. One counts
// each turn's tokens, in an activity the history records.
func TestReplayDecidesAsTheRun(t *testing.T) {
	ts := newServer(t)
	cases := []struct {
		name   string
		conv   func(*converse.Options)
		decide bool   // signal an approval of call s1
		holds  string // an activity type the history must hold, if set
	}{
		{"a wall time that fires", func(o *converse.Options) { o.Budget = &converse.Budget{WallTime: 500 * time.Millisecond} }, false, ""},
		{"an approval", func(o *converse.Options) { o.ApprovalPolicy = func(converse.Call) bool { return true } }, true, ""},
		{"a stop", func(o *converse.Options) {
			o.PrepareTurn = func(_ context.Context, t *converse.TurnPlan) error { t.Stop = len(t.Answered) > 0; return nil }
		}, false, ""},
		{"a token count", func(o *converse.Options) {
			o.Context = &converse.ContextPolicy{MaxInputTokens: 100000, CountTokens: true}
		}, false, ctemporal.CountActivityName},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := bedrocktest.NewServer(bedrocktest.Script(
				bedrocktest.ToolUse("", bedrocktest.Call{ID: "s1", Name: "slow", Input: map[string]any{}}),
				bedrocktest.Text("Done."),
			))
			defer srv.Close()
			slow, err := tools.New("slow", "Takes a while.", func(ctx context.Context, _ struct{}) (string, error) {
				time.Sleep(time.Second) // past the wall time, on the server's clock
				return "slept", nil
			})
			require.NoError(t, err)
			reg, err := tools.NewRegistry(slow)
			require.NoError(t, err)
			opts := func(o *ctemporal.Options) { o.Conversation = tc.conv }
			queue := "replay-" + t.Name()
			ts.NewWorker(queue, ctemporal.New(srv.Client(), reg, opts).Register)

			c := ts.GetDefaultClient()
			ctx := context.Background()
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: queue, TaskQueue: queue}, ctemporal.WorkflowName,
				ctemporal.Input{ModelID: claude, Prompt: "Take your time."})
			require.NoError(t, err)
			if tc.decide {
				require.NoError(t, c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), ctemporal.DecideSignalName, []converse.Decision{converse.Call{ID: "s1"}.Approve()}))
			}
			_ = run.Get(ctx, nil) // the run's outcome is other tests'; its history is this one's

			h := history(t, c, run)
			if tc.holds != "" {
				require.True(t, slices.ContainsFunc(h.Events, func(ev *historypb.HistoryEvent) bool {
					a := ev.GetActivityTaskScheduledEventAttributes()
					return a != nil && a.GetActivityType().GetName() == tc.holds
				}), "the history holds a %s activity", tc.holds)
			}
			replayer := worker.NewWorkflowReplayer()
			replayer.RegisterWorkflowWithOptions(ctemporal.New(nil, reg, opts).Workflow, workflow.RegisterOptions{Name: ctemporal.WorkflowName})
			require.NoError(t, replayer.ReplayWorkflowHistory(nil, h))
		})
	}
}

// history is the whole history of run, closed.
func history(t *testing.T, c client.Client, run client.WorkflowRun) *historypb.History {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, ev)
	}
	return h
}
