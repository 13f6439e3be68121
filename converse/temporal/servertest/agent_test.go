package servertest_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/agenttool"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	ctemporal "github.com/tooluse/bedrock/converse/temporal"
	"github.com/tooluse/bedrock/tools"
)

// TestAgentApprovalOnTheServer runs, on the real server, a coordinator
// whose agent delegates to an agent whose call needs approval. Each agent's
// call is a child workflow. The coordinator's Status lists the call by its
// path, and a Decide signal to the coordinator approves it. The send runs
// once, the agents and the coordinator finish, and the usage of the three
// conversations is summed. The history then replays.
func TestAgentApprovalOnTheServer(t *testing.T) {
	ts := newServer(t)
	serve := func(replies ...*bedrocktest.Reply) *bedrocktest.Server {
		srv := bedrocktest.NewServer(bedrocktest.Script(replies...))
		t.Cleanup(srv.Close)
		return srv
	}
	delegate := func(id, name string) *bedrocktest.Reply {
		return bedrocktest.ToolUse("", bedrocktest.Call{ID: id, Name: name, Input: map[string]any{"task": "mail ops"}})
	}
	outer := serve(delegate("o1", "boss"), bedrocktest.Text("Done."))
	boss := serve(delegate("b1", "mailer"), bedrocktest.Text("Delegated."))
	mailer := serve(bedrocktest.ToolUse("", bedrocktest.Call{ID: "i1", Name: "send", Input: map[string]any{}}), bedrocktest.Text("Mailed."))
	var sends atomic.Int32
	send, err := tools.New("send", "Sends mail.", func(context.Context, struct{}) (string, error) {
		sends.Add(1)
		return "sent", nil
	}, func(o *tools.Options) { o.RequireApproval = true })
	require.NoError(t, err)
	mailerDef := agenttool.Agent{Name: "mailer", Description: "Mails.", Client: mailer.Client(), Model: claude, Tools: mustRegistry(t, send)}
	bossDef := agenttool.Agent{Name: "boss", Description: "Delegates.", Client: boss.Client(), Model: claude, Tools: mustRegistry(t, agentTool(t, mailerDef))}
	reg := mustRegistry(t, agentTool(t, bossDef))
	agents := func(o *ctemporal.Options) { o.Agents = []agenttool.Agent{bossDef, mailerDef} }
	queue := "agents"
	ts.NewWorker(queue, ctemporal.New(outer.Client(), reg, agents).Register)

	c := ts.GetDefaultClient()
	ctx := context.Background()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "coordinator", TaskQueue: queue}, ctemporal.WorkflowName,
		ctemporal.Input{ModelID: claude, Prompt: "Mail ops."})
	require.NoError(t, err)
	var st ctemporal.Status
	require.Eventually(t, func() bool { // until the mailer's pause reached the coordinator
		v, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), ctemporal.StatusQueryName)
		return err == nil && v.Get(&st) == nil && len(st.Pending) == 1
	}, time.Minute, 50*time.Millisecond)
	assert.Equal(t, "o1/b1/i1", st.Pending[0].ID)
	assert.Equal(t, int32(0), sends.Load())
	require.NoError(t, c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), ctemporal.DecideSignalName, []converse.Decision{converse.Approve("o1/b1/i1")}))
	var res ctemporal.Result
	require.NoError(t, run.Get(ctx, &res))

	assert.Equal(t, "Done.", res.Text)
	assert.Equal(t, int32(1), sends.Load(), "send ran once")
	// bedrocktest answers each call with 10 input and 5 output tokens: six calls.
	assert.Equal(t, 60, res.Usage.InputTokens, "the agents' usage is the coordinator's")
	assert.Equal(t, 30, res.Usage.OutputTokens)

	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions(ctemporal.New(nil, reg, agents).Workflow, workflow.RegisterOptions{Name: ctemporal.WorkflowName})
	// The children's IDs are made of the coordinator's: the replay runs as it.
	require.NoError(t, replayer.ReplayWorkflowHistoryWithOptions(nil, history(t, c, run), worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: run.GetID(), RunID: run.GetRunID()}}))
}

func agentTool(t *testing.T, a agenttool.Agent) *tools.Tool {
	t.Helper()
	tl, err := agenttool.New(a)
	require.NoError(t, err)
	return tl
}

func mustRegistry(t *testing.T, ts ...*tools.Tool) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(ts...)
	require.NoError(t, err)
	return reg
}
