package servertest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/server/temporaltest"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	ctemporal "github.com/tooluse/bedrock/converse/temporal"
	"github.com/tooluse/bedrock/tools"
)

// payloadRun runs a conversation whose first turn calls the tool "big",
// returning size bytes, calls times, on a worker with the default payload
// limit. The model answers "Seen." once it has the results. The run has
// a WorkflowExecutionTimeout, so that a workflow task failing in a loop
// ends it as timed out instead of hanging the test.
func payloadRun(t *testing.T, ts *temporaltest.TestServer, size, calls int) (client.WorkflowRun, *atomic.Int32) {
	t.Helper()
	cs := make([]bedrocktest.Call, calls)
	for i := range cs {
		cs[i] = bedrocktest.Call{ID: fmt.Sprintf("big%d", i), Name: "big", Input: map[string]any{}}
	}
	srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.ToolUse("", cs...), bedrocktest.Text("Seen.")))
	t.Cleanup(srv.Close)
	var runs atomic.Int32
	big, err := tools.New("big", "A large result.", func(context.Context, struct{}) (string, error) {
		runs.Add(1)
		return strings.Repeat("x", size), nil
	}, func(o *tools.Options) { o.MaxOutput = 2 * size })
	require.NoError(t, err)
	reg, err := tools.NewRegistry(big)
	require.NoError(t, err)
	queue := "payload-" + t.Name()
	ts.NewWorker(queue, ctemporal.New(srv.Client(), reg).Register)
	run, err := ts.GetDefaultClient().ExecuteWorkflow(context.Background(),
		client.StartWorkflowOptions{ID: queue, TaskQueue: queue, WorkflowExecutionTimeout: 2 * time.Minute},
		ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "Fetch it."})
	require.NoError(t, err)
	return run, &runs
}

// TestToolResultOverThePayloadLimit: a result of 3 MiB, over Temporal's 2
// MiB, becomes an error result the model reads; the tool runs once, and
// the conversation goes on to its answer.
func TestToolResultOverThePayloadLimit(t *testing.T) {
	ts := newServer(t)
	run, runs := payloadRun(t, ts, 3<<20, 1)
	var res ctemporal.Result
	require.NoError(t, run.Get(context.Background(), &res))
	assert.Equal(t, "Seen.", res.Text)
	assert.EqualValues(t, 1, runs.Load(), "the tool ran once")

	last := res.State.Messages[len(res.State.Messages)-2] // the results, before the answer
	require.Len(t, last.Content, 1)
	result, ok := last.Content[0].(*types.ContentBlockMemberToolResult)
	require.True(t, ok, "%T", last.Content[0])
	assert.Equal(t, "big0", aws.ToString(result.Value.ToolUseId))
	assert.Equal(t, types.ToolResultStatusError, result.Value.Status)
	text := result.Value.Content[0].(*types.ToolResultContentBlockMemberText).Value
	assert.Regexp(t, `^Error: the tool result is \d+ bytes, over the payload limit of \d+ bytes .*claim check.*not run again\.$`, text)
	assert.Zero(t, workflowTaskFailures(t, ts.GetDefaultClient(), run))
}

// TestModelRequestOverThePayloadLimit: two results of 1.2 MiB each fit,
// but the request that would carry both does not. The run fails at once
// with PayloadTooLargeType, not retryable, naming the claim check. No
// workflow task fails.
func TestModelRequestOverThePayloadLimit(t *testing.T) {
	ts := newServer(t)
	run, runs := payloadRun(t, ts, 1200<<10, 2)
	err := run.Get(context.Background(), nil)
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "%v", err)
	assert.Equal(t, ctemporal.PayloadTooLargeType, app.Type())
	assert.True(t, app.NonRetryable())
	assert.Regexp(t, `^temporal: the model request of turn 2 is \d+ bytes, over the payload limit of \d+ bytes .*claim check \(DataConverter\)`, app.Message())
	assert.EqualValues(t, 2, runs.Load(), "each tool ran once")
	assert.Zero(t, workflowTaskFailures(t, ts.GetDefaultClient(), run))
}

// workflowTaskFailures counts the failed workflow tasks in run's history.
func workflowTaskFailures(t *testing.T, c client.Client, run client.WorkflowRun) int {
	t.Helper()
	n := 0
	for _, ev := range history(t, c, run).GetEvents() {
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED {
			n++
		}
	}
	return n
}
