package converse_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// A tool that asks the user a question in the middle of its call (as an MCP
// server's elicitation does through package mcptools) pauses the conversation.
// Resume with the answer runs the call again with it.
func ExampleAccept() {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "deploy", Input: map[string]any{}}),
		bedrocktest.Text("Deployed."),
	))
	defer srv.Close()
	deploy, _ := tools.NewRaw("deploy", "Deploys the release.", json.RawMessage(`{"type":"object"}`),
		func(ctx context.Context, _ json.RawMessage) (any, error) {
			answer, ok := tools.AnswerOf(ctx)
			if !ok {
				return nil, &tools.InputRequiredError{Question: tools.Question{Message: "Deploy where?",
					Schema: json.RawMessage(`{"type":"object","properties":{"env":{"enum":["staging","production"]}},"required":["env"]}`)}}
			}
			fmt.Printf("deploying: %s %s\n", answer.Action, answer.Content)
			return "deployed", nil
		})
	reg, _ := tools.NewRegistry(deploy)

	conv := converse.New(srv.Client(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", reg)
	_, err := conv.Send(context.Background(), "Deploy the release.")
	var paused *converse.PausedError
	if !errors.As(err, &paused) {
		fmt.Println(err)
		return
	}
	call := paused.Pending[0]
	fmt.Println("the tool asks:", call.Question.Message)

	_, err = conv.Resume(context.Background(), call.Accept(json.RawMessage(`{"env":"mars"}`)))
	fmt.Println(errors.Is(err, converse.ErrDecision))
	res, err := conv.Resume(context.Background(), call.Accept(json.RawMessage(`{"env":"staging"}`)))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	// Output:
	// the tool asks: Deploy where?
	// true
	// deploying: accept {"env":"staging"}
	// Deployed.
}
