package converse_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// claude35 is a Claude model without native structured output: it takes
// the final tool, forced with toolChoice any.
const claude35 = "us.anthropic.claude-3-5-sonnet-20241022-v2:0"

// finalInstructionOf is the system prompt's line that tells a model that
// cannot be forced to call the final tool.
const finalInstructionOf = "Give your final answer only by calling the tool " + finalFn

// answerPath says how a request asked for the structured answer. "native" is
// outputConfig.textFormat, no final tool. "forced" is the final tool and
// toolChoice any. "instructed" is the final tool with the default choice and
// the system prompt's line. t fails on anything else.
func answerPath(t *testing.T, r *bedrocktest.Request) string {
	t.Helper()
	final, instructed := false, false
	if r.ToolConfig != nil {
		for _, tool := range r.ToolConfig.Tools {
			if spec, ok := tool.(*types.ToolMemberToolSpec); ok && aws.ToString(spec.Value.Name) == finalFn &&
				strings.HasPrefix(aws.ToString(spec.Value.Description), "Gives the final answer") {
				final = true
			}
		}
	}
	for _, b := range r.System {
		if s, ok := b.(*types.SystemContentBlockMemberText); ok && strings.HasPrefix(s.Value, finalInstructionOf) {
			instructed = true
		}
	}
	native := r.OutputConfig != nil && r.OutputConfig.TextFormat != nil
	switch {
	case native && !final && !instructed:
		return "native"
	case !native && final && !instructed:
		_, any := r.ToolConfig.ToolChoice.(*types.ToolChoiceMemberAny)
		require.True(t, any, "the final tool is forced")
		return "forced"
	case !native && final && instructed:
		assert.Nil(t, r.ToolConfig.ToolChoice, "the default choice")
		return "instructed"
	}
	t.Fatalf("request to %s asks for the answer in no known way: outputConfig %v, final tool %v, instruction %v", aws.ToString(r.ModelId), native, final, instructed)
	return ""
}

// TestStructuredPathPerTurn: the way a structured Send asks for its answer is
// decided for each request from the model it goes to. That may be a fallback
// model's (Options.ModelCalls.Fallback) or Options.PrepareTurn's, not once
// from New's. bedrocktest, like Bedrock, rejects toolChoice any on Llama and
// outputConfig.textFormat on a model without structured output. The answer is
// checked in the form its turn asked for.
func TestStructuredPathPerTurn(t *testing.T) {
	tool := func(id string) *bedrocktest.Reply { return bedrocktest.ToolUse("", call(id, finalFn, valid)) }
	tests := []struct {
		name, model, to string
		reply           *bedrocktest.Reply
		first, then     string // the paths of the first request and of the one to the model turned to
	}{
		{"forced falls back to a model without any", claude35, llama, tool("t1"), "forced", "instructed"},
		{"native falls back to a model without structured output", claude, claude35, tool("t1"), "native", "forced"},
		{"native falls back to Nova", claude, novaPro, tool("t1"), "native", "forced"},
		{"forced falls back to a native model", novaPro, claude, bedrocktest.Text(valid), "forced", "native"},
		{"native falls back to Llama", claude, llama, tool("t1"), "native", "instructed"},
	}
	for _, tt := range tests {
		t.Run("fallback/"+tt.name, func(t *testing.T) {
			srv, _ := serve(t, bedrocktest.Throttle(1, bedrocktest.Script(tt.reply)))
			conv := converse.New(srv.Client(noRetries), tt.model, nil, func(o *converse.Options) {
				o.ModelCalls = &converse.CallPolicy{Fallback: []string{tt.to}}
			})
			got, res, err := converse.Structured[forecast](context.Background(), conv, "Weather in Oslo?")
			require.NoError(t, err)
			assert.Equal(t, forecast{City: "Oslo", Temp: 3}, got)
			assert.JSONEq(t, valid, res.Text)
			assert.Equal(t, types.StopReasonEndTurn, res.StopReason)
			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			assert.Equal(t, tt.first, answerPath(t, reqs[0]))
			assert.Equal(t, tt.to, aws.ToString(reqs[1].ModelId))
			assert.Equal(t, tt.then, answerPath(t, reqs[1]))
			assertValid(t, conv, tt.to)
		})
		t.Run("prepare turn/"+tt.name, func(t *testing.T) {
			srv, client := serve(t, bedrocktest.Script(tt.reply))
			conv := converse.New(client, tt.model, nil, func(o *converse.Options) {
				o.PrepareTurn = func(_ context.Context, turn *converse.TurnPlan) error {
					turn.ModelID = tt.to
					return nil
				}
			})
			got, _, err := converse.Structured[forecast](context.Background(), conv, "Weather in Oslo?")
			require.NoError(t, err)
			assert.Equal(t, forecast{City: "Oslo", Temp: 3}, got)
			reqs := srv.Requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, tt.then, answerPath(t, reqs[0]))
		})
	}
}

// throttleCall is h with its n-th call, from 1, throttled; h does not see it.
func throttleCall(n int, h bedrocktest.Handler) bedrocktest.Handler {
	var mu sync.Mutex
	calls := 0
	return bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		mu.Lock()
		calls++
		throttled := calls == n
		mu.Unlock()
		if throttled {
			return nil, bedrocktest.Throttling()
		}
		return h.ServeConverse(ctx, req)
	})
}

// TestStructuredPathPerTurnCorrected: a correction goes on in the path of
// the turn that makes it: a native answer that fails the schema, sent
// back, is answered by the fallback model's call of the final tool.
func TestStructuredPathPerTurnCorrected(t *testing.T) {
	srv, _ := serve(t, throttleCall(2, bedrocktest.Script(
		bedrocktest.Text(invalid),
		bedrocktest.ToolUse("", call("t1", finalFn, valid)),
	)))
	conv := converse.New(srv.Client(noRetries), claude, nil, func(o *converse.Options) {
		o.ModelCalls = &converse.CallPolicy{Fallback: []string{claude35}}
	})
	got, res, err := converse.Structured[forecast](context.Background(), conv, "Weather in Oslo?")
	require.NoError(t, err)
	assert.Equal(t, forecast{City: "Oslo", Temp: 3}, got)
	assert.Equal(t, 2, res.Turns)
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, "native", answerPath(t, reqs[0]))
	assert.Equal(t, "native", answerPath(t, reqs[1]), "the correction's turn, to New's model, throttled")
	assert.Equal(t, "forced", answerPath(t, reqs[2]))
	kind, text := lastCorrection(t, reqs[2])
	assert.Equal(t, "text", kind)
	assert.Contains(t, text, `property "temp": want integer, got string`)
	assertValid(t, conv, claude35)
}

// citedDocument is a text document with citations enabled, or not.
func citedDocument(enabled bool) types.ContentBlock {
	return &types.ContentBlockMemberDocument{Value: types.DocumentBlock{
		Format: types.DocumentFormatTxt, Name: aws.String("report"),
		Source:    &types.DocumentSourceMemberBytes{Value: []byte("Oslo: 3 degrees, cloudy.")},
		Citations: &types.CitationsConfig{Enabled: aws.Bool(enabled)},
	}}
}

// TestStructuredNativeWithCitations: Anthropic's structured outputs are
// incompatible with citations, so a native model whose request holds a
// document with citations enabled gets the final tool instead, forced;
// bedrocktest rejects outputConfig.textFormat beside such a document.
// Citations turned off leave the native path.
func TestStructuredNativeWithCitations(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		t.Run(map[bool]string{true: "citations enabled", false: "citations disabled"}[enabled], func(t *testing.T) {
			answer := bedrocktest.Text(valid)
			if enabled {
				answer = bedrocktest.ToolUse("", call("t1", finalFn, valid))
			}
			srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("I have read it."), answer))
			conv := converse.New(client, claude, nil)
			_, err := conv.SendMessage(context.Background(), types.Message{Content: []types.ContentBlock{citedDocument(enabled), text("Read the report.")}})
			require.NoError(t, err)
			got, _, err := converse.Structured[forecast](context.Background(), conv, "Weather in Oslo?")
			require.NoError(t, err)
			assert.Equal(t, forecast{City: "Oslo", Temp: 3}, got)
			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			want := "native"
			if enabled {
				want = "forced"
			}
			assert.Equal(t, want, answerPath(t, reqs[1]))
		})
	}
	t.Run("step API", func(t *testing.T) {
		srv, client := serve(t, bedrocktest.Script(bedrocktest.ToolUse("", call("t1", finalFn, valid))))
		c := converse.New(nil, claude, nil)
		schema := json.RawMessage(`{"title":"forecast","type":"object","properties":{"city":{"type":"string"},"temp":{"type":"integer"}},"required":["city","temp"]}`)
		ctx := context.Background()
		step, err := c.BeginStructured(ctx, types.Message{Content: []types.ContentBlock{citedDocument(true), text("Weather in Oslo?")}}, schema)
		require.NoError(t, err)
		require.NotNil(t, step.ModelCall)
		out, callErr := client.Converse(ctx, step.ModelCall.Input)
		step, err = c.HandleResponse(ctx, step.ModelCall, out, callErr)
		require.NoError(t, err)
		require.NotNil(t, step.Result)
		assert.JSONEq(t, valid, step.Result.Text)
		assert.Equal(t, "forced", answerPath(t, srv.Requests()[0]))
	})
}

// TestStructuredCorrectionAfterReasoningAlone: a reply of reasoning alone (its
// text blank) is not sent back for correction as an assistant message of
// reasoning alone. keepable itself does not keep such a message. The model is
// asked again after the prompt, and the history stays valid.
func TestStructuredCorrectionAfterReasoningAlone(t *testing.T) {
	thought := &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{
		Value: types.ReasoningTextBlock{Text: aws.String("hmm"), Signature: aws.String("sig")}}}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			var rejected []converse.AnswerRejected
			srv, client := serve(t, bedrocktest.Script(
				bedrocktest.Output(types.StopReasonEndTurn, thought, &types.ContentBlockMemberText{Value: " "}),
				p.answer("t1", valid),
			))
			conv := converse.New(client, p.model, nil, func(o *converse.Options) { o.OnEvent = rejectedInto(&rejected) })
			got, res, err := converse.Structured[forecast](context.Background(), conv, "Weather in Oslo?")
			require.NoError(t, err)
			assert.Equal(t, forecast{City: "Oslo", Temp: 3}, got)
			assert.Equal(t, 2, res.Turns)
			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			assert.Equal(t, reqs[0].Messages, reqs[1].Messages, "the same question again")
			for _, m := range reqs[1].Messages {
				if m.Role != types.ConversationRoleAssistant {
					continue
				}
				assert.True(t, slices.ContainsFunc(m.Content, func(b types.ContentBlock) bool {
					_, r := b.(*types.ContentBlockMemberReasoningContent)
					return !r
				}), "an assistant message of reasoning alone is sent")
			}
			require.Len(t, rejected, 1)
			assert.Equal(t, converse.AnswerRejected{Turn: 1, Answer: "", Reason: rejected[0].Reason}, rejected[0])
			hist := conv.History()
			require.Len(t, hist, 2)
			assert.Contains(t, textOfMessage(hist[1]), valid)
			assertValid(t, conv, p.model)
		})
	}
}

// TestStructuredStepsSendWhatSendSendsOnFallback: driven one step at a
// time, a structured answer whose first call is throttled and falls back
// makes the requests StructuredJSON makes, each shaped for its model.
func TestStructuredStepsSendWhatSendSendsOnFallback(t *testing.T) {
	schema := json.RawMessage(`{"title":"forecast","type":"object","properties":{"city":{"type":"string"},
		"temp":{"type":"integer"}},"required":["city","temp"]}`)
	script := func() bedrocktest.Handler {
		return bedrocktest.Throttle(1, bedrocktest.Script(bedrocktest.ToolUse("", call("t1", finalFn, invalid)), bedrocktest.ToolUse("", call("t2", finalFn, valid))))
	}
	opts := func(o *converse.Options) { o.ModelCalls = &converse.CallPolicy{Fallback: []string{llama}} }
	ctx := context.Background()
	sendSrv, _ := serve(t, script())
	want, _, err := converse.StructuredJSON(ctx, converse.New(sendSrv.Client(noRetries), claude, nil, opts), "Weather in Oslo?", schema)
	require.NoError(t, err)

	stepSrv, _ := serve(t, script())
	stepClient := stepSrv.Client(noRetries)
	c := converse.New(nil, claude, nil, opts)
	step, err := c.BeginStructured(ctx, types.Message{Content: []types.ContentBlock{text("Weather in Oslo?")}}, schema)
	res, err := driveFrom(ctx, c, engine{call: converseWith(stepClient)}, step, err)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), res.Text)
	sent, driven := sendSrv.Requests(), stepSrv.Requests()
	require.Len(t, sent, 3)
	require.Len(t, driven, len(sent))
	for i := range sent {
		assert.JSONEq(t, string(sent[i].Body), string(driven[i].Body), "request %d", i+1)
	}
	// Sonnet 4.5, throttled; Llama's call of the final tool, which fails
	// the schema; the correction to Llama too, which answered last
	// (the fallback keeps the turns for a while), instructed again.
	assert.Equal(t, []string{"native", "instructed", "instructed"}, []string{answerPath(t, sent[0]), answerPath(t, sent[1]), answerPath(t, sent[2])})
	assert.Equal(t, llama, aws.ToString(sent[1].ModelId))
	assert.Equal(t, llama, aws.ToString(sent[2].ModelId))
	kind, _ := lastCorrection(t, sent[2])
	assert.Equal(t, "toolResult", kind)
	assertValid(t, c, claude)
}

// TestStructuredMaxTokens: an answer cut off by max_tokens is not sent
// back: in text it is ErrInvalidAnswer, inside the final tool's call
// ErrMaxTokens, as ErrInvalidAnswer's doc says.
func TestStructuredMaxTokens(t *testing.T) {
	t.Run("text", func(t *testing.T) {
		_, client := serve(t, bedrocktest.Script(bedrocktest.Output(types.StopReasonMaxTokens, &types.ContentBlockMemberText{Value: `{"city":"Os`})))
		_, _, err := converse.Structured[forecast](context.Background(), converse.New(client, claude, nil), "Weather in Oslo?")
		require.ErrorIs(t, err, converse.ErrInvalidAnswer)
		assert.NotErrorIs(t, err, converse.ErrMaxTokens)
		assert.ErrorContains(t, err, "max_tokens")
	})
	t.Run("final tool's call", func(t *testing.T) {
		cut := &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("t1"), Name: aws.String(finalFn),
			Input: document.NewLazyDocument(map[string]any{"city": "Oslo"})}}
		_, client := serve(t, bedrocktest.Script(bedrocktest.Output(types.StopReasonMaxTokens, cut)))
		_, _, err := converse.Structured[forecast](context.Background(), converse.New(client, novaPro, nil), "Weather in Oslo?")
		require.ErrorIs(t, err, converse.ErrMaxTokens)
		assert.NotErrorIs(t, err, converse.ErrInvalidAnswer)
	})
}
