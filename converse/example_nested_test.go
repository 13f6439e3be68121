package converse_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// A tool that calls a model of its own reports what that cost, and reads
// what its caller's Budget leaves it (package agenttool does both for a
// whole nested conversation).
func ExampleCaller_ReportUsage() {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "summarize"}),
		bedrocktest.Text("Done."),
	))
	defer srv.Close()
	summarize, _ := tools.New("summarize", "Summarizes the notes.", func(ctx context.Context, _ struct{}) (string, error) {
		caller := converse.CallerOf(ctx) // nil outside a tool round; its methods allow it
		left, err := caller.Budget()
		if err != nil {
			return "", err
		}
		fmt.Println("output tokens left for the nested call:", left.Send.OutputTokens)
		// ... a model call of the tool's own, which used:
		cost := 0.001
		caller.ReportUsage(converse.Usage{InputTokens: 100, OutputTokens: 50, TotalTokens: 150}, &cost)
		return "a summary", nil
	})
	reg, _ := tools.NewRegistry(summarize)
	conv := converse.New(srv.Client(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", reg, func(o *converse.Options) {
		o.Budget = &converse.Budget{Send: converse.Limits{OutputTokens: 1000}}
	})
	res, err := conv.Send(context.Background(), "Summarize my notes.")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("input tokens:", res.Usage.InputTokens, "output tokens:", res.Usage.OutputTokens)
	// Output:
	// output tokens left for the nested call: 995
	// input tokens: 120 output tokens: 60
}

// A tool that runs a conversation of its own passes its pause up. The
// caller pauses with the nested call, named by its path. The caller's
// Resume hands the tool the decisions for it. Package agenttool does this
// for an agent, its conversation kept in a Store.
func ExampleCaller_Decisions() {
	const model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "o1", Name: "mailer"}), // the caller's model
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "m1", Name: "send"}),   // the nested conversation's
		bedrocktest.Text("Sent."),
		bedrocktest.Text("Done."),
	))
	defer srv.Close()
	send, _ := tools.New("send", "Sends mail.", func(context.Context, struct{}) (string, error) {
		return "sent", nil
	}, func(o *tools.Options) { o.RequireApproval = true })
	inner, _ := tools.NewRegistry(send)
	var nested *converse.Conversation // kept between the call's runs
	mailer, _ := tools.New("mailer", "Mails.", func(ctx context.Context, _ struct{}) (string, error) {
		var res *converse.Result
		var err error
		if nested == nil {
			nested = converse.New(srv.Client(), model, inner)
			res, err = nested.Send(ctx, "Mail it.")
		} else {
			res, err = nested.Resume(ctx, converse.CallerOf(ctx).Decisions()...)
		}
		if err != nil {
			return "", err // a *converse.PausedError pauses the caller too
		}
		return res.Text, nil
	})
	reg, _ := tools.NewRegistry(mailer)
	conv := converse.New(srv.Client(), model, reg)
	_, err := conv.Send(context.Background(), "Mail the team.")
	var paused *converse.PausedError
	if !errors.As(err, &paused) {
		fmt.Println(err)
		return
	}
	fmt.Println("pending:", paused.Pending[0].ID, paused.Pending[0].Tool)
	res, err := conv.Resume(context.Background(), paused.Pending[0].Approve())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	// Output:
	// pending: o1/m1 send
	// Done.
}
