package converse_test

import (
	"context"
	"fmt"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// A tool that calls a model of its own reports what that cost, and reads
// what its caller's Budget leaves it (package agenttool does both for a
// whole nested conversation).
func ExampleReportUsage() {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "summarize"}),
		bedrocktest.Text("Done."),
	))
	defer srv.Close()
	summarize, _ := tools.New("summarize", "Summarizes the notes.", func(ctx context.Context, _ struct{}) (string, error) {
		left, err := converse.BudgetLeft(ctx)
		if err != nil {
			return "", err
		}
		fmt.Println("output tokens left for the nested call:", left.Send.OutputTokens)
		// ... a model call of the tool's own, which used:
		cost := 0.001
		converse.ReportUsage(ctx, converse.Usage{InputTokens: 100, OutputTokens: 50, TotalTokens: 150}, &cost)
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
