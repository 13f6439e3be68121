package converse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// An engine that owns retries and persistence drives a conversation one step
// at a time. It makes each model call itself and runs each tool call where it
// likes (here, in place), handing back what came of it. It counts the
// tokens of each turn's request when its ContextPolicy asks for it. The
// requests are the ones Send would make.
func ExampleConversation_Begin() {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "calculator", Input: map[string]any{"a": 6, "b": 7, "operation": "multiply"}}),
		bedrocktest.Text("6 times 7 is 42."),
	))
	defer srv.Close()
	client := srv.Client()
	reg, _ := tools.NewRegistry(tools.Calculator())
	ctx := context.Background()

	// No client: the engine makes the calls.
	policy := &converse.ContextPolicy{MaxInputTokens: 150000, CountTokens: true}
	conv := converse.New(nil, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", reg, func(o *converse.Options) { o.Context = policy })
	step, err := conv.Begin(ctx, types.Message{Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "What is 6 times 7?"}}})
	for err == nil && step.Result == nil {
		switch {
		case step.CountTokens != nil: // a failed count goes back too: the step then estimates
			fmt.Println("count tokens")
			out, countErr := client.CountTokens(ctx, step.CountTokens)
			step, err = conv.HandleCount(ctx, step.CountTokens, out, countErr)
		case step.ModelCall != nil:
			fmt.Printf("model call %d\n", step.ModelCall.Turn)
			out, callErr := client.Converse(ctx, step.ModelCall.Input)
			// A retryable error is tried again after a growing pause, a few
			// times; then it ends the run, as any error of the call does.
			for wait := 100 * time.Millisecond; converse.Classify(callErr) == converse.OutcomeRetry && wait < 2*time.Second; wait *= 2 {
				time.Sleep(wait)
				out, callErr = client.Converse(ctx, step.ModelCall.Input)
			}
			step, err = conv.HandleResponse(ctx, step.ModelCall, out, callErr)
		case len(step.Calls) > 0:
			var results []converse.CallResult
			for _, call := range step.Calls {
				result := conv.Executor().Run(ctx, call)
				fmt.Printf("run %s %s: %s\n", call.Tool, call.Input, result.Result.(*types.ContentBlockMemberToolResult).Value.Status)
				results = append(results, result)
			}
			step, err = conv.AnswerCalls(ctx, results...)
		default: // approvals here; a call's Question would take an answer (Accept)
			var decisions []converse.Decision
			for _, call := range step.Pending {
				decisions = append(decisions, call.Approve())
			}
			step, err = conv.Decide(ctx, decisions...)
		}
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(step.Result.Text)
	// Output:
	// count tokens
	// model call 1
	// run calculator {"a":6,"b":7,"operation":"multiply"}: success
	// count tokens
	// model call 2
	// 6 times 7 is 42.
}

// An engine with a client of its own makes a streaming Request's call with
// ConverseStream and hands the events, assembled, to HandleResponse.
func ExampleAssembleStream() {
	srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("Hello from a stream.")))
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()

	conv := converse.New(nil, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", nil, func(o *converse.Options) { o.Stream = &converse.StreamPolicy{} })
	step, err := conv.Begin(ctx, types.Message{Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hi."}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	req := step.ModelCall
	fmt.Println("stream:", req.Stream())
	so, err := client.ConverseStream(ctx, req.StreamInput())
	var out *bedrockruntime.ConverseOutput
	if err == nil {
		out, err = converse.AssembleStream(ctx, so)
	}
	step, err = conv.HandleResponse(ctx, req, out, err)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(step.Result.Text)
	// Output:
	// stream: true
	// Hello from a stream.
}

// An engine running a Step's calls itself hands AnswerCalls what
// Executor.Run returned. A call whose tool asks the user a question
// becomes pending with it. Decide's answer hands the call out again with
// its Answer, which the tool reads when it runs again.
func ExampleConversation_AnswerCalls() {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "deploy", Input: map[string]any{}}),
		bedrocktest.Text("Deployed to staging."),
	))
	defer srv.Close()
	deploy, _ := tools.NewRaw("deploy", "Deploys the release.", json.RawMessage(`{"type":"object"}`),
		func(ctx context.Context, _ json.RawMessage) (any, error) {
			answer, ok := tools.AnswerOf(ctx)
			if !ok {
				return nil, &tools.InputRequiredError{Question: tools.Question{Message: "Deploy where?"}}
			}
			return "deployed: " + string(answer.Content), nil
		})
	reg, _ := tools.NewRegistry(deploy)
	ctx := context.Background()

	conv := converse.New(nil, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", reg)
	step, err := conv.Begin(ctx, types.Message{Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Deploy the release."}}})
	for err == nil && step.Result == nil {
		switch {
		case step.ModelCall != nil:
			out, callErr := srv.Client().Converse(ctx, step.ModelCall.Input)
			step, err = conv.HandleResponse(ctx, step.ModelCall, out, callErr)
		case len(step.Calls) > 0:
			var results []converse.CallResult
			for _, call := range step.Calls {
				results = append(results, conv.Executor().Run(ctx, call))
			}
			step, err = conv.AnswerCalls(ctx, results...)
		default:
			call := step.Pending[0]
			fmt.Println("the tool asks:", call.Question.Message)
			if step, err = conv.Decide(ctx, call.Accept(json.RawMessage(`{"env":"staging"}`))); err == nil {
				fmt.Printf("run again with: %s\n", step.Calls[0].Answer.Content)
			}
		}
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(step.Result.Text)
	// Output:
	// the tool asks: Deploy where?
	// run again with: {"env":"staging"}
	// Deployed to staging.
}
