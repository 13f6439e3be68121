package temporal_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	ctemporal "github.com/tooluse/bedrock/converse/temporal"
	"github.com/tooluse/bedrock/tools"
)

// answers records the answers each deploy call was run with, by toolUseId.
type answers struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (a *answers) add(id, answer string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen == nil {
		a.seen = map[string][]string{}
	}
	a.seen[id] = append(a.seen[id], answer)
}

// askingRegistry has deploy, which asks where to deploy until it has an
// answer, and delegate, which reports usage as a nested agent would.
func askingRegistry(t *testing.T, seen *answers) *tools.Registry {
	t.Helper()
	deploy, err := tools.NewRaw("deploy", "Deploys the release.", json.RawMessage(`{"type":"object"}`),
		func(ctx context.Context, _ json.RawMessage) (any, error) {
			a, ok := tools.AnswerOf(ctx)
			if !ok {
				seen.add(tools.CallID(ctx), "")
				return nil, &tools.InputRequiredError{Question: tools.Question{Message: "Deploy where?",
					Schema: json.RawMessage(`{"type":"object","properties":{"env":{"enum":["staging","production"]}},"required":["env"]}`)}}
			}
			seen.add(tools.CallID(ctx), string(a.Action)+" "+string(a.Content))
			if a.Action != tools.Accept {
				return "the user chose " + string(a.Action), nil
			}
			return "deployed to " + string(a.Content), nil
		})
	require.NoError(t, err)
	delegate, err := tools.New("delegate", "Asks another agent.", func(ctx context.Context, _ struct{}) (string, error) {
		converse.CallerOf(ctx).ReportUsage(converse.Usage{InputTokens: 100, OutputTokens: 20, TotalTokens: 120}, aws.Float64(0.25))
		return "the agent agrees", nil
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(deploy, delegate)
	require.NoError(t, err)
	return reg
}

func askingScript() bedrocktest.Handler {
	return bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "d1", Name: "deploy", Input: map[string]any{}}, bedrocktest.Call{ID: "n1", Name: "delegate", Input: map[string]any{}}),
		bedrocktest.Text("Done."),
	)
}

// TestWorkflowQuestion: a tool that asks pauses its call, which Status
// lists with its question; a Decide signal with the answer runs the call
// again, as a new activity, with the answer, and the model sees what came
// of it. An answer that breaks the question's schema is dropped, and the
// call waits on. The usage a tool reports counts in the Result's. The
// requests and usage are Send's with an Approver answering the same.
func TestWorkflowQuestion(t *testing.T) {
	for _, tc := range []struct {
		name     string
		signals  [][]converse.Decision
		decision converse.Decision // what Send's Approver answers
		ran      string            // the answer the retried call saw
		want     string            // the result the model reads
	}{
		{"accept", [][]converse.Decision{{converse.Call{ID: "d1"}.Accept(json.RawMessage(`{"env":"mars"}`))}, {converse.Call{ID: "d1"}.Accept(json.RawMessage(`{"env":"staging"}`))}},
			converse.Call{}.Accept(json.RawMessage(`{"env":"staging"}`)), `accept {"env":"staging"}`, `"deployed to {\"env\":\"staging\"}"`},
		{"decline", [][]converse.Decision{{converse.Call{ID: "d1"}.Decline()}}, converse.Call{}.Decline(), "decline ", `"the user chose decline"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sendSrv := bedrocktest.NewServer(askingScript())
			defer sendSrv.Close()
			c := converse.New(sendSrv.Client(), claude, askingRegistry(t, &answers{}), func(o *converse.Options) {
				o.Approver = func(context.Context, converse.Call) (converse.Decision, error) { return tc.decision, nil }
			})
			want, err := c.Send(context.Background(), "Deploy, and ask the agent.")
			require.NoError(t, err)

			var seen answers
			srv := bedrocktest.NewServer(askingScript())
			defer srv.Close()
			env := testEnv(t, srv, askingRegistry(t, &seen))
			var ids []string
			env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
				if info.ActivityType.Name == ctemporal.ToolActivityName {
					ids = append(ids, info.ActivityID)
				}
			})
			var paused []ctemporal.Status
			for i, ds := range tc.signals {
				env.RegisterDelayedCallback(func() {
					v, err := env.QueryWorkflow(ctemporal.StatusQueryName)
					require.NoError(t, err)
					var st ctemporal.Status
					require.NoError(t, v.Get(&st))
					paused = append(paused, st)
					env.SignalWorkflow(ctemporal.DecideSignalName, ds)
				}, time.Duration(i+1)*time.Hour)
			}
			env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "Deploy, and ask the agent."})
			res := result(t, env)

			assert.Equal(t, "Done.", res.Text)
			for _, st := range paused {
				require.Len(t, st.Pending, 1, "the call waits for its answer")
				require.NotNil(t, st.Pending[0].Question)
				assert.Equal(t, "Deploy where?", st.Pending[0].Question.Message)
			}
			assert.Equal(t, map[string][]string{"d1": {"", tc.ran}}, seen.seen, "asked, then run again with the answer")
			assert.ElementsMatch(t, []string{"tool/1/d1", "tool/1/n1", "tool/1/d1/2"}, ids)
			sent := srv.Requests()[1].Messages[2].Content[0].(*types.ContentBlockMemberToolResult).Value
			assert.Equal(t, tc.want, sent.Content[0].(*types.ToolResultContentBlockMemberText).Value)
			assert.Equal(t, want.Usage, res.Usage, "the reported usage counted, as in Send")
			assert.Equal(t, want.Usage, res.State.Usage)
			require.Len(t, srv.Requests(), len(sendSrv.Requests()))
			for i, r := range sendSrv.Requests() {
				assert.JSONEq(t, string(r.Body), string(srv.Requests()[i].Body), "request %d", i+1)
			}
		})
	}
}
