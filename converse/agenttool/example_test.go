package agenttool_test

import (
	"context"
	"encoding/json"
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

// The calls of an agent that need approval are put to the coordinator's
// Approver, each named by its path: the coordinator's call ID, "/", the
// agent's.
func ExampleNew_approver() {
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
	mailer, err := agenttool.New(agenttool.Agent{Name: "mailer", Description: "Sends mail.",
		Client: mailerBedrock.Client(), Model: model, Tools: mailerTools})
	if err != nil {
		fmt.Println(err)
		return
	}
	reg, _ := tools.NewRegistry(mailer)
	conv := converse.New(coordinatorBedrock.Client(), model, reg, func(o *converse.Options) {
		o.Approver = func(_ context.Context, call converse.Call) (converse.Decision, error) {
			fmt.Println("approve?", call.ID, call.Tool)
			return call.Approve(), nil
		}
	})
	res, err := conv.Send(context.Background(), "Tell the team.")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	// Output:
	// approve? t1/m1 send
	// The team was mailed.
}

// Without an Approver, an agent's call that needs approval pauses the
// coordinator. Its State, saved as JSON, carries the paused agent's
// (converse.Caller.State), so another process restores it, with no Store,
// and resumes the agent, then the coordinator.
func ExampleNew_pausedAcrossProcesses() {
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
	// process makes the coordinator's tools, as each process does.
	process := func() *tools.Registry {
		send, _ := tools.New("send", "Sends mail.", func(context.Context, struct{}) (string, error) {
			fmt.Println("sending")
			return "sent", nil
		}, func(o *tools.Options) { o.RequireApproval = true })
		mailerTools, _ := tools.NewRegistry(send)
		mailer, _ := agenttool.New(agenttool.Agent{Name: "mailer", Description: "Sends mail.",
			Client: mailerBedrock.Client(), Model: model, Tools: mailerTools})
		reg, _ := tools.NewRegistry(mailer)
		return reg
	}

	conv := converse.New(coordinatorBedrock.Client(), model, process())
	_, err := conv.Send(context.Background(), "Tell the team.")
	fmt.Println(err)
	saved, _ := json.Marshal(conv.State())

	// Another process.
	var st converse.State
	if err := json.Unmarshal(saved, &st); err != nil {
		fmt.Println(err)
		return
	}
	conv, err = converse.Restore(coordinatorBedrock.Client(), process(), &st)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := conv.Resume(context.Background(), converse.Call{ID: "t1/m1"}.Approve())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	// Output:
	// converse: 1 tool calls await a decision: send (t1/m1)
	// sending
	// The team was mailed.
}
