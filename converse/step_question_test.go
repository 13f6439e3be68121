package converse_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// nestedUsage is what the delegate tool reports, as a nested
// conversation would.
var nestedUsage = converse.Usage{InputTokens: 100, OutputTokens: 20, TotalTokens: 120}

// askingTools has deploy, which asks where to deploy until it has an
// answer, and delegate, which reports nestedUsage at $0.25.
func askingTools(t *testing.T) *tools.Registry {
	t.Helper()
	deploy, err := tools.NewRaw("deploy", "Deploys the release.", json.RawMessage(`{"type":"object"}`),
		func(ctx context.Context, _ json.RawMessage) (any, error) {
			a, ok := tools.AnswerOf(ctx)
			if !ok {
				return nil, &tools.InputRequiredError{Question: tools.Question{Message: "Deploy where?", Retry: json.RawMessage(`"r1"`),
					Schema: json.RawMessage(`{"type":"object","properties":{"env":{"enum":["staging","production"]}},"required":["env"]}`)}}
			}
			if a.Action != tools.Accept {
				return "the user chose " + string(a.Action), nil
			}
			return "deployed to " + string(a.Content) + " with " + string(a.Question.Retry), nil
		})
	require.NoError(t, err)
	delegate, err := tools.New("delegate", "Asks another agent.", func(ctx context.Context, _ struct{}) (string, error) {
		converse.CallerOf(ctx).ReportUsage(nestedUsage, aws.Float64(0.25))
		return "the agent agrees", nil
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(deploy, delegate)
	require.NoError(t, err)
	return reg
}

func askingScript() bedrocktest.Handler {
	return bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "d1", Name: "deploy", Input: map[string]any{}}, bedrocktest.Call{ID: "n1", Name: "delegate", Input: map[string]any{}}),
		bedrocktest.Text("Deployed."),
	)
}

// TestStepQuestion: a call whose tool asks is reported to the conversation
// with AnswerCalls, which pauses it with its Question, once (a redelivery
// is stale); Decide's answer hands it out again with its Answer, which
// Executor.Run gives the tool. The usage a tool reports rides with its
// result. The requests, usage and cost are Send's with an Approver
// answering the same.
func TestStepQuestion(t *testing.T) {
	ctx := context.Background()
	answer := converse.Call{ID: "d1"}.Accept(json.RawMessage(`{"env":"staging"}`))
	sendSrv, sendClient := serve(t, askingScript())
	c := converse.New(sendClient, claude, askingTools(t), func(o *converse.Options) {
		o.Approver = func(context.Context, converse.Call) (converse.Decision, error) { return answer, nil }
	})
	want, err := c.Send(ctx, "Deploy, and ask the agent.")
	require.NoError(t, err)

	srv, client := serve(t, askingScript())
	conv := converse.New(nil, claude, askingTools(t))
	step, err := conv.Begin(ctx, types.Message{Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Deploy, and ask the agent."}}})
	require.NoError(t, err)
	out, err := client.Converse(ctx, step.ModelCall.Input)
	require.NoError(t, err)
	step, err = conv.HandleResponse(ctx, step.ModelCall, out, nil)
	require.NoError(t, err)
	require.Len(t, step.Calls, 2)
	var ran []converse.CallResult
	for _, call := range step.Calls {
		assert.Nil(t, call.Answer)
		ran = append(ran, conv.Executor().Run(ctx, call))
	}
	require.NotNil(t, ran[0].Question, "deploy asks")
	assert.Nil(t, ran[0].Result)
	assert.Equal(t, "Deploy where?", ran[0].Question.Message)
	assert.Equal(t, nestedUsage, ran[1].Usage, "delegate's usage rides with its result")
	assert.Equal(t, 0.25, *ran[1].CostUSD)

	step, err = conv.AnswerCalls(ctx, ran...)
	require.NoError(t, err)
	assert.Nil(t, step.ModelCall)
	assert.Empty(t, step.Calls)
	require.Len(t, step.Pending, 1, "paused on the question")
	assert.Equal(t, "d1", step.Pending[0].ID)
	assert.Equal(t, ran[0].Question, step.Pending[0].Question)
	assert.Equal(t, step.Pending, conv.State().Pending, "the State carries the question")
	before := conv.State()
	_, err = conv.AnswerCalls(ctx, ran[0])
	require.ErrorIs(t, err, converse.ErrStaleStep, "the question again")
	_, err = conv.AnswerCalls(ctx, ran[1])
	require.ErrorIs(t, err, converse.ErrStaleStep, "the result again: its usage is not counted twice")
	assert.Equal(t, before, conv.State())

	_, err = conv.Decide(ctx, converse.Call{ID: "d1"}.Approve())
	require.ErrorIs(t, err, converse.ErrDecision, "a question takes an answer")
	step, err = conv.Decide(ctx, answer)
	require.NoError(t, err)
	require.Len(t, step.Calls, 1, "handed out again")
	require.NotNil(t, step.Calls[0].Answer)
	assert.Equal(t, tools.Accept, step.Calls[0].Answer.Action)
	again := conv.Executor().Run(ctx, step.Calls[0])
	require.Nil(t, again.Question)
	assert.Zero(t, again.Usage)
	assert.Nil(t, again.CostUSD, "nothing reported")
	step, err = conv.AnswerCalls(ctx, again)
	require.NoError(t, err)
	require.NotNil(t, step.ModelCall)
	out, err = client.Converse(ctx, step.ModelCall.Input)
	require.NoError(t, err)
	step, err = conv.HandleResponse(ctx, step.ModelCall, out, nil)
	require.NoError(t, err)
	require.NotNil(t, step.Result)

	sent := srv.Requests()[1].Messages[2].Content[0].(*types.ContentBlockMemberToolResult).Value
	assert.Equal(t, `"deployed to {\"env\":\"staging\"} with \"r1\""`, sent.Content[0].(*types.ToolResultContentBlockMemberText).Value)
	assert.Equal(t, want.Usage, step.Result.Usage, "the nested usage counted, as in Send")
	assert.Equal(t, want.CostUSD, step.Result.CostUSD)
	assert.Equal(t, want.Usage, conv.State().Usage)
	require.Len(t, srv.Requests(), len(sendSrv.Requests()))
	for i, r := range sendSrv.Requests() {
		assert.JSONEq(t, string(r.Body), string(srv.Requests()[i].Body), "request %d", i+1)
	}
}
