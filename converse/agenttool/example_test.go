package agenttool_test

import (
	"context"
	"fmt"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/agenttool"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// A coordinator delegates to a researcher agent, which has a model of its
// own (here a second offline Bedrock). The coordinator's Result counts the
// researcher's turns too.
func Example() {
	researcherBedrock := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("Paris has 2.1 million people.")))
	defer researcherBedrock.Close()
	coordinatorBedrock := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "researcher", Input: map[string]any{"task": "How many people live in Paris?"}}),
		bedrocktest.Text("About 2.1 million."),
	))
	defer coordinatorBedrock.Close()

	researcher, err := agenttool.New(agenttool.Agent{
		Name:        "researcher",
		Description: "Finds facts. Give it the whole question.",
		Client:      researcherBedrock.Client(),
		Model:       "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
		System:      "You research facts.",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	reg, _ := tools.NewRegistry(researcher)
	conv := converse.New(coordinatorBedrock.Client(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", reg)
	res, err := conv.Send(context.Background(), "How big is Paris?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	fmt.Printf("%d turns of the coordinator's, %d input tokens in all\n", res.Turns, res.Usage.InputTokens)
	// Output:
	// About 2.1 million.
	// 2 turns of the coordinator's, 30 input tokens in all
}
