package servertest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/temporaltest"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/agenttool"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	ctemporal "github.com/tooluse/bedrock/converse/temporal"
	"github.com/tooluse/bedrock/tools"
)

// agentsOnTheServer starts, on ts's server, a coordinator whose agent,
// boss, delegates to an agent, mailer, whose send call needs approval,
// under the workflow ID id. It returns the run, its agents, and the count
// of send's runs, once Status lists the send call, paused.
func agentsOnTheServer(t *testing.T, ts *temporaltest.TestServer, id string) (client.WorkflowRun, *tools.Registry, func(*ctemporal.Options), *atomic.Int32) {
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
	sends := &atomic.Int32{}
	send, err := tools.New("send", "Sends mail.", func(context.Context, struct{}) (string, error) {
		sends.Add(1)
		return "sent", nil
	}, func(o *tools.Options) { o.RequireApproval = true })
	require.NoError(t, err)
	mailerDef := agenttool.Agent{Name: "mailer", Description: "Mails.", Client: mailer.Client(), Model: claude, Tools: mustRegistry(t, send)}
	bossDef := agenttool.Agent{Name: "boss", Description: "Delegates.", Client: boss.Client(), Model: claude, Tools: mustRegistry(t, agentTool(t, mailerDef))}
	reg := mustRegistry(t, agentTool(t, bossDef))
	agents := func(o *ctemporal.Options) { o.Agents = []agenttool.Agent{bossDef, mailerDef} }
	ts.NewWorker(id, ctemporal.New(outer.Client(), reg, agents).Register)

	c := ts.GetDefaultClient()
	ctx := context.Background()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: id}, ctemporal.WorkflowName,
		ctemporal.Input{ModelID: claude, Prompt: "Mail ops."})
	require.NoError(t, err)
	var st ctemporal.Status
	require.Eventually(t, func() bool { // until the mailer's pause reached the coordinator
		v, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), ctemporal.StatusQueryName)
		return err == nil && v.Get(&st) == nil && len(st.Pending) == 1
	}, time.Minute, 50*time.Millisecond)
	assert.Equal(t, "o1/b1/i1", st.Pending[0].ID)
	assert.Equal(t, int32(0), sends.Load())
	return run, reg, agents, sends
}

// TestAgentApprovalOnTheServer runs, on the real server, a coordinator
// whose agent delegates to an agent whose call needs approval. Each agent's
// call is a child workflow. The coordinator's Status lists the call by its
// path, and a Decide signal to the coordinator approves it. The send runs
// once, the agents and the coordinator finish, and the usage of the three
// conversations is summed. The history then replays.
func TestAgentApprovalOnTheServer(t *testing.T) {
	ts := newServer(t)
	run, reg, agents, sends := agentsOnTheServer(t, ts, "coordinator")
	c, ctx := ts.GetDefaultClient(), context.Background()
	require.NoError(t, c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), ctemporal.DecideSignalName, []converse.Decision{converse.Call{ID: "o1/b1/i1"}.Approve()}))
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

// TestAgentCancelledOnTheServer: cancelling the coordinator while an
// agent's agent waits for approval cancels both agents' workflows.
func TestAgentCancelledOnTheServer(t *testing.T) {
	ts := newServer(t)
	run, _, _, sends := agentsOnTheServer(t, ts, "cancelled")
	c, ctx := ts.GetDefaultClient(), context.Background()
	require.NoError(t, c.CancelWorkflow(ctx, run.GetID(), run.GetRunID()))
	require.ErrorAs(t, run.Get(ctx, nil), new(*temporal.CanceledError))
	for _, id := range []string{"cancelled/o1", "cancelled/o1/b1"} {
		require.Eventually(t, func() bool {
			d, err := c.DescribeWorkflowExecution(ctx, id, "")
			return err == nil && d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED
		}, time.Minute, 50*time.Millisecond, "the workflow %s was cancelled", id)
	}
	assert.Equal(t, int32(0), sends.Load())
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

// stepperAgent makes an agent, "stepper", of the tools of reg: it returns
// the registry of the conversation that calls it, and the options of the
// worker that runs it.
func stepperAgent(client converse.Client, reg *tools.Registry) (*tools.Registry, func(*ctemporal.Options)) {
	def := agenttool.Agent{Name: "stepper", Description: "Does steps.", Client: client, Model: claude, Tools: reg}
	tl, err := agenttool.New(def)
	if err != nil {
		panic(err)
	}
	outer, err := tools.NewRegistry(tl)
	if err != nil {
		panic(err)
	}
	return outer, func(o *ctemporal.Options) {
		agentOptions(o)
		o.Agents = []agenttool.Agent{def}
	}
}

// agentHandler answers the coordinator, which delegates the steps to
// stepper, and stepper, which runs a quick step and one that hangs.
func agentHandler() bedrocktest.Handler {
	return bedrocktest.HandlerFunc(func(_ context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		inner := req.Messages[0].Content[0].(*types.ContentBlockMemberText).Value == "both steps"
		switch {
		case inner && len(req.Messages) == 1:
			return bedrocktest.ToolUse("", stepCall("q1", "quick"), stepCall("h1", "hang")), nil
		case inner:
			return bedrocktest.Text("Both done."), nil
		case len(req.Messages) == 1:
			return bedrocktest.ToolUse("", bedrocktest.Call{ID: "s1", Name: "stepper", Input: map[string]any{"task": "both steps"}}), nil
		}
		return bedrocktest.Text("The agent did both."), nil
	})
}

// TestWorkerKilledDuringAnAgent kills a worker process with SIGKILL while
// an agent's tool call runs in its child workflow, after the agent's other
// call completed. A new worker finishes the agent's conversation, then the
// coordinator's: the completed call is not run again, the interrupted one
// is.
func TestWorkerKilledDuringAnAgent(t *testing.T) {
	ts := newServer(t)
	srv := bedrocktest.NewServer(agentHandler())
	defer srv.Close()
	ledgerFile := filepath.Join(t.TempDir(), "ledger")
	queue := "killed-agent"

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envWorker+"="+ts.GetFrontendHostPort(), envNS+"="+ts.GetDefaultNamespace(),
		envQueue+"="+queue, envModel+"="+srv.URL, envLedger+"="+ledgerFile, envAgent+"=1")
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	c := ts.GetDefaultClient()
	ctx := context.Background()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: queue, TaskQueue: queue}, ctemporal.WorkflowName,
		ctemporal.Input{ModelID: claude, Prompt: "Have the agent do both steps."})
	require.NoError(t, err)

	// Gates: q1's completion is in the agent's history, and h1 runs.
	agent := c.GetWorkflow(ctx, queue+"/s1", "")
	require.Eventually(t, func() bool {
		return readLedger(t, ledgerFile)["start h1"] == 1 && activityCompleted(t, c, agent, "tool/1/q1")
	}, time.Minute, 20*time.Millisecond)
	require.NoError(t, cmd.Process.Kill()) // SIGKILL: no graceful stop
	_ = cmd.Wait()
	killed = true

	reg, opts := stepperAgent(srv.Client(), mustRegistry(t, stepTool(ledgerFile, false)))
	ts.NewWorker(queue, ctemporal.New(srv.Client(), reg, opts).Register)
	var res ctemporal.Result
	require.NoError(t, run.Get(ctx, &res))
	assert.Equal(t, "The agent did both.", res.Text)
	assert.Equal(t, map[string]int{"start q1": 1, "end q1": 1, "start h1": 2, "end h1": 1}, readLedger(t, ledgerFile))
	assert.Equal(t, 40, res.Usage.InputTokens, "the agent's two model calls and the coordinator's")
}
