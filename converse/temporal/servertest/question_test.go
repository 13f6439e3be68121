package servertest_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	ctemporal "github.com/tooluse/bedrock/converse/temporal"
	"github.com/tooluse/bedrock/tools"
)

// TestQuestionOnTheServer runs, on the real server, a workflow whose tool
// asks the user where to deploy. Status lists the question, and a Decide
// signal answers it. The call runs again with the answer, and the model
// reads what came of it, a decline included. The history then replays.
func TestQuestionOnTheServer(t *testing.T) {
	ts := newServer(t)
	for _, tc := range []struct {
		name     string
		decision converse.Decision
		ran      string // the answer the retried call saw
		want     string // the result the model reads
	}{
		{"accept", converse.Call{ID: "d1"}.Accept(json.RawMessage(`{"env":"staging"}`)), `accept {"env":"staging"}`, `"deployed to staging"`},
		{"decline", converse.Call{ID: "d1"}.Decline(), "decline ", `"the user chose decline"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := bedrocktest.NewServer(bedrocktest.Script(
				bedrocktest.ToolUse("", bedrocktest.Call{ID: "d1", Name: "deploy", Input: map[string]any{}}),
				bedrocktest.Text("Done."),
			))
			defer srv.Close()
			var mu sync.Mutex
			var seen []string
			deploy, err := tools.NewRaw("deploy", "Deploys the release.", json.RawMessage(`{"type":"object"}`),
				func(ctx context.Context, _ json.RawMessage) (any, error) {
					a, ok := tools.AnswerOf(ctx)
					mu.Lock()
					defer mu.Unlock()
					if !ok {
						seen = append(seen, "asked")
						return nil, &tools.InputRequiredError{Question: tools.Question{Message: "Deploy where?",
							Schema: json.RawMessage(`{"type":"object","properties":{"env":{"enum":["staging","production"]}},"required":["env"]}`)}}
					}
					seen = append(seen, string(a.Action)+" "+string(a.Content))
					if a.Action != tools.Accept {
						return "the user chose " + string(a.Action), nil
					}
					var in struct{ Env string }
					_ = json.Unmarshal(a.Content, &in)
					return "deployed to " + in.Env, nil
				})
			require.NoError(t, err)
			reg, err := tools.NewRegistry(deploy)
			require.NoError(t, err)
			queue := "question-" + t.Name()
			ts.NewWorker(queue, ctemporal.New(srv.Client(), reg).Register)

			c := ts.GetDefaultClient()
			ctx := context.Background()
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: queue, TaskQueue: queue}, ctemporal.WorkflowName,
				ctemporal.Input{ModelID: claude, Prompt: "Deploy the release."})
			require.NoError(t, err)
			var st ctemporal.Status
			require.Eventually(t, func() bool { // until the workflow has taken the activity's question
				v, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), ctemporal.StatusQueryName)
				return err == nil && v.Get(&st) == nil && len(st.Pending) == 1
			}, time.Minute, 50*time.Millisecond)
			require.NotNil(t, st.Pending[0].Question)
			assert.Equal(t, "Deploy where?", st.Pending[0].Question.Message)
			require.NoError(t, c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), ctemporal.DecideSignalName, []converse.Decision{tc.decision}))
			var res ctemporal.Result
			require.NoError(t, run.Get(ctx, &res))

			assert.Equal(t, "Done.", res.Text)
			mu.Lock()
			assert.Equal(t, []string{"asked", tc.ran}, seen, "asked, then run again with the answer")
			mu.Unlock()
			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			sent := reqs[1].Messages[2].Content[0].(*types.ContentBlockMemberToolResult).Value
			assert.Equal(t, tc.want, sent.Content[0].(*types.ToolResultContentBlockMemberText).Value)

			replayer := worker.NewWorkflowReplayer()
			replayer.RegisterWorkflowWithOptions(ctemporal.New(nil, reg).Workflow, workflow.RegisterOptions{Name: ctemporal.WorkflowName})
			require.NoError(t, replayer.ReplayWorkflowHistory(nil, history(t, c, run)))
		})
	}
}
