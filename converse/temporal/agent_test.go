package temporal_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	ctemporal "github.com/tooluse/bedrock/converse/temporal"
	"github.com/tooluse/bedrock/tools"
)

// seen is what a tool saw of its call: its activity's info and its own
// context's deadline.
type seen struct {
	info     activity.Info
	deadline time.Time
}

// deadlineRegistry has three tools that record what they see: "query_db"
// and "report", with no timeout of their own, and "capped", whose own
// timeout is two minutes.
func deadlineRegistry(t *testing.T, mu *sync.Mutex, got map[string]seen) *tools.Registry {
	t.Helper()
	record := func(name string, optFns ...func(*tools.Options)) *tools.Tool {
		tool, err := tools.New(name, "Records its deadline.", func(ctx context.Context, _ struct{}) (string, error) {
			dl, ok := ctx.Deadline()
			require.True(t, ok)
			mu.Lock()
			defer mu.Unlock()
			got[name] = seen{info: activity.GetInfo(ctx), deadline: dl}
			return "ok", nil
		}, optFns...)
		require.NoError(t, err)
		return tool
	}
	reg, err := tools.NewRegistry(record("query_db"), record("report"),
		record("capped", func(o *tools.Options) { o.Timeout = 2 * time.Minute }))
	require.NoError(t, err)
	return reg
}

// TestToolActivitiesTakeTheDefaultsFieldByField: the README's
// ToolActivities entry is a task queue and an hour from start to close.
// It keeps the default heartbeat timeout of a minute. Its hour is the
// call's timeout too, in place of the conversation's Tools.Timeout (a
// minute by default), so that the tool may run that long. A tool's own
// timeout still bounds it. A tool with no entry keeps the defaults.
func TestToolActivitiesTakeTheDefaultsFieldByField(t *testing.T) {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("",
			bedrocktest.Call{ID: "q1", Name: "query_db"},
			bedrocktest.Call{ID: "r1", Name: "report"},
			bedrocktest.Call{ID: "c1", Name: "capped"}),
		bedrocktest.Text("Done."),
	))
	defer srv.Close()
	var mu sync.Mutex
	got := map[string]seen{}
	env := testEnv(t, srv, deadlineRegistry(t, &mu, got), func(o *ctemporal.Options) {
		long := workflow.ActivityOptions{TaskQueue: "near-the-db", StartToCloseTimeout: time.Hour}
		o.ToolActivities = map[string]workflow.ActivityOptions{"query_db": long, "capped": long}
	})
	env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "Query the db, then report."})
	assert.Equal(t, "Done.", result(t, env).Text)
	require.Len(t, got, 3)

	q := got["query_db"]
	assert.Equal(t, "near-the-db", q.info.TaskQueue)
	assert.Equal(t, time.Hour, q.info.StartToCloseTimeout)
	assert.Equal(t, time.Minute, q.info.HeartbeatTimeout, "the default heartbeat timeout, though a timeout is set")
	assert.True(t, q.deadline.Before(q.info.Deadline), "the call times out before its activity does")
	assert.True(t, q.deadline.After(q.info.Deadline.Add(-time.Minute)), "the tool may run nearly an hour, not Tools.Timeout's minute")

	c := got["capped"]
	assert.Equal(t, time.Minute, c.info.HeartbeatTimeout)
	assert.True(t, c.deadline.Before(c.info.Deadline), "the tool's own timeout of two minutes bounds it")

	r := got["report"]
	assert.Equal(t, 10*time.Minute, r.info.StartToCloseTimeout)
	assert.Equal(t, time.Minute, r.info.HeartbeatTimeout)
	assert.True(t, r.deadline.Before(r.info.Deadline), "the conversation's Tools.Timeout, a minute, bounds a tool with no entry")
}

// TestToolActivityTimeoutIsTheCalls: ToolActivity's timeout, set, is the
// call's timeout as an entry's is: it replaces Conversation's Tools.Timeout.
func TestToolActivityTimeoutIsTheCalls(t *testing.T) {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "r1", Name: "report"}),
		bedrocktest.Text("Done."),
	))
	defer srv.Close()
	var mu sync.Mutex
	got := map[string]seen{}
	env := testEnv(t, srv, deadlineRegistry(t, &mu, got), func(o *ctemporal.Options) {
		o.Conversation = func(o *converse.Options) { o.Tools.Timeout = time.Second }
		o.ToolActivity = workflow.ActivityOptions{ScheduleToCloseTimeout: 3 * time.Hour}
	})
	env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "Report."})
	assert.Equal(t, "Done.", result(t, env).Text)
	r := got["report"]
	assert.Equal(t, time.Minute, r.info.HeartbeatTimeout)
	assert.True(t, r.deadline.Before(r.info.Deadline), "the call times out before its activity does")
	assert.True(t, r.deadline.After(r.info.Deadline.Add(-time.Minute)), "nearly three hours, not Tools.Timeout's second")
}

// TestHungToolIsAnsweredNotRetried: a tool that never returns, under a
// ToolActivities entry's timeout, is answered as timed out within its
// activity's attempt, as the call's timeout is a tenth shorter. It is not
// retried by the activity's retry policy and run again.
func TestHungToolIsAnsweredNotRetried(t *testing.T) {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "h1", Name: "hang"}),
		bedrocktest.Text("It hung."),
	))
	defer srv.Close()
	var runs atomic.Int32
	hang, err := tools.New("hang", "Never returns.", func(ctx context.Context, _ struct{}) (string, error) {
		runs.Add(1)
		<-ctx.Done()
		return "", ctx.Err()
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(hang)
	require.NoError(t, err)
	env := testEnv(t, srv, reg, func(o *ctemporal.Options) {
		o.ToolActivities = map[string]workflow.ActivityOptions{"hang": {StartToCloseTimeout: 3 * time.Second}} // the call: 2.7 s
	})
	env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "Hang."})
	assert.Equal(t, "It hung.", result(t, env).Text)
	assert.Equal(t, int32(1), runs.Load(), "one attempt")
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Contains(t, string(reqs[1].Body), "timed out")
}
