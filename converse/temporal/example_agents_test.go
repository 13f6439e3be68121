package temporal_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/agenttool"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	ctemporal "github.com/tooluse/bedrock/converse/temporal"
	"github.com/tooluse/bedrock/tools"
)

// Example_agents runs a coordinator whose agent, a mailer, runs as a child
// workflow. The mailer's send call needs approval: the coordinator's
// Status lists it by its path, and a Decide signal to the coordinator
// approves it.
func Example_agents() {
	const model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	mailerBedrock := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "m1", Name: "send"}),
		bedrocktest.Text("Mailed."),
	))
	defer mailerBedrock.Close()
	coordinatorBedrock := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "mailer", Input: map[string]any{"task": "Mail the team."}}),
		bedrocktest.Text("The team was mailed."),
	))
	defer coordinatorBedrock.Close()

	send, _ := tools.New("send", "Sends mail.", func(context.Context, struct{}) (string, error) {
		return "sent", nil
	}, func(o *tools.Options) { o.RequireApproval = true })
	mailerTools, _ := tools.NewRegistry(send)
	mailer := agenttool.Agent{Name: "mailer", Description: "Sends mail.", Client: mailerBedrock.Client(), Model: model, Tools: mailerTools}
	mailerTool, _ := agenttool.New(mailer)
	reg, _ := tools.NewRegistry(mailerTool)
	agent := ctemporal.New(coordinatorBedrock.Client(), reg, func(o *ctemporal.Options) { o.Agents = []agenttool.Agent{mailer} })

	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	agent.Register(env)
	env.RegisterDelayedCallback(func() {
		v, _ := env.QueryWorkflow(ctemporal.StatusQueryName)
		var st ctemporal.Status
		_ = v.Get(&st)
		fmt.Println("pending:", st.Pending[0].ID, st.Pending[0].Tool)
		env.SignalWorkflow(ctemporal.DecideSignalName, []converse.Decision{converse.Call{ID: "t1/m1"}.Approve()})
	}, time.Hour)
	env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: model, Prompt: "Tell the team."})
	var res ctemporal.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text, res.Usage.InputTokens)
	// Output:
	// pending: t1/m1 send
	// The team was mailed. 40
}
