package temporal_test

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	ctemporal "github.com/tooluse/bedrock/converse/temporal"
	"github.com/tooluse/bedrock/tools"
)

// Example runs a conversation as a workflow in Temporal's test
// environment, with bedrocktest as Bedrock. On a real server, the worker
// registers the agent with worker.New's worker, and a starter runs the
// workflow with client.ExecuteWorkflow (see the package doc).
func Example() {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "calculator", Input: map[string]any{"a": 6, "b": 7, "operation": "multiply"}}),
		bedrocktest.Text("6 times 7 is 42."),
	))
	defer srv.Close()

	// The worker holds the Bedrock client and the tools.
	reg, _ := tools.NewRegistry(tools.Calculator())
	agent := ctemporal.New(srv.Client(), reg)
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	agent.Register(env)

	env.ExecuteWorkflow(ctemporal.WorkflowName,
		ctemporal.Input{ModelID: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", Prompt: "What is 6 times 7?"})
	var res ctemporal.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text, res.StopReason, res.Turns)
	// Output: 6 times 7 is 42. end_turn 2
}

// Example_payloadLimit fails a run whose model request is over the payload
// limit, here 1 KiB, at once and for good. A worker whose clients have a
// claim check (DataConverter) sets NoPayloadLimit instead.
func Example_payloadLimit() {
	reg, _ := tools.NewRegistry(tools.Calculator())
	agent := ctemporal.New(nil, reg, func(o *ctemporal.Options) { o.PayloadLimit = 1 << 10 })
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	agent.Register(env)

	env.ExecuteWorkflow(ctemporal.WorkflowName,
		ctemporal.Input{ModelID: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", Prompt: strings.Repeat("Tell me more. ", 100)})
	var app *temporal.ApplicationError
	if errors.As(env.GetWorkflowError(), &app) {
		fmt.Println(app.Type(), app.NonRetryable())
	}
	// Output: converse.PayloadTooLarge true
}
