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

type ticketIn struct {
	Title string `json:"title"`
}

// A tool that needs approval pauses the conversation; its state is saved as
// JSON, and a fresh Conversation (in another process, say) resumes it with
// the decision.
func ExampleConversation_Resume() {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "create_ticket", Input: map[string]any{"title": "Printer on fire"}}),
		bedrocktest.Text("Ticket created."),
	))
	defer srv.Close()
	ticket, _ := tools.New("create_ticket", "Creates a ticket.",
		func(ctx context.Context, in ticketIn) (string, error) {
			fmt.Println("creating", in.Title)
			return "TICKET-1", nil
		}, func(o *tools.Options) { o.RequireApproval = true })
	reg, _ := tools.NewRegistry(ticket)
	model := "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

	conv := converse.New(srv.Client(), model, reg)
	_, err := conv.Send(context.Background(), "The printer is on fire.")
	var paused *converse.PausedError
	if !errors.As(err, &paused) {
		fmt.Println(err)
		return
	}
	for _, c := range paused.Pending {
		fmt.Printf("awaiting approval: %s %s\n", c.Tool, c.Input)
	}
	saved, err := json.Marshal(conv.State()) // or Options.Session saves it at every step
	if err != nil {
		fmt.Println(err)
		return
	}

	var st converse.State
	if err := json.Unmarshal(saved, &st); err != nil {
		fmt.Println(err)
		return
	}
	later, err := converse.Restore(srv.Client(), reg, &st)
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := later.Resume(context.Background(), paused.Pending[0].Approve())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	// Output:
	// awaiting approval: create_ticket {"title":"Printer on fire"}
	// creating Printer on fire
	// Ticket created.
}

// A user who moves on from a paused task stops it: the pending call is
// answered as not run, and the next prompt goes to the model at once,
// with that answer.
func ExampleConversation_Stop() {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "create_ticket", Input: map[string]any{"title": "Printer on fire"}}),
		bedrocktest.Text("Understood: no ticket. The coffee machine is in room 4."),
	))
	defer srv.Close()
	ticket, _ := tools.New("create_ticket", "Creates a ticket.",
		func(ctx context.Context, in ticketIn) (string, error) { return "TICKET-1", nil },
		func(o *tools.Options) { o.RequireApproval = true })
	reg, _ := tools.NewRegistry(ticket)
	ctx := context.Background()

	conv := converse.New(srv.Client(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", reg)
	_, err := conv.Send(ctx, "The printer is on fire.")
	fmt.Println(converse.Classify(err))
	_, err = conv.Send(ctx, "Never mind. Where is the coffee machine?")
	fmt.Println(errors.Is(err, converse.ErrPaused))

	if err := conv.Stop(ctx); err != nil {
		fmt.Println(err)
		return
	}
	res, err := conv.Send(ctx, "Never mind. Where is the coffee machine?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	// Output:
	// paused
	// true
	// Understood: no ticket. The coffee machine is in room 4.
}
