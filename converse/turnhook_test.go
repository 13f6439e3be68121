package converse_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/modelinfo"
	"github.com/tooluse/bedrock/tools"
)

const haiku = "us.anthropic.claude-3-5-haiku-20241022-v1:0"

// byModel answers the calls to the model down with fail, and the others
// with the script h.
func byModel(down string, fail *bedrocktest.Error, h bedrocktest.Handler) bedrocktest.Handler {
	return bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		if aws.ToString(req.ModelId) == down {
			return nil, fail
		}
		return h.ServeConverse(ctx, req)
	})
}

// TestFallback: a turn whose call fails with throttling, a model not ready,
// the service unavailable or a model timeout is made again with the fallback
// model. That model is of another family: the status field goes, which the
// validating server checks. The Result, the events and the requests say which
// model answered. A validation error is not fallen back on.
func TestFallback(t *testing.T) {
	tests := []struct {
		name     string
		fail     *bedrocktest.Error
		fallback bool
	}{
		{"throttling", bedrocktest.Throttling(), true},
		{"model not ready", bedrocktest.ModelNotReady(), true},
		{"service unavailable", bedrocktest.ServiceUnavailable(), true},
		{"model timeout", bedrocktest.ModelTimeout(), true},
		{"validation", bedrocktest.Validation("Malformed input request"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := bedrocktest.NewServer(byModel(claude, tt.fail, bedrocktest.Script(
				bedrocktest.ToolUse("", bedrocktest.Call{ID: "c1", Name: "calculator", Input: map[string]any{"a": 1, "b": 2}}),
				bedrocktest.Text("3"),
			)))
			t.Cleanup(srv.Close)
			var ends []converse.TurnEnd
			var falls []converse.ModelFallback
			c := converse.New(srv.Client(noRetries), claude, calculator(t), func(o *converse.Options) {
				o.ModelCalls = &converse.CallPolicy{Fallback: []string{llama}}
				o.OnEvent = func(ev converse.Event) {
					switch e := ev.(type) {
					case converse.TurnEnd:
						ends = append(ends, e)
					case converse.ModelFallback:
						falls = append(falls, e)
					}
				}
			})
			res, err := c.Send(context.Background(), "1+2?")
			if !tt.fallback {
				var ve *types.ValidationException
				require.ErrorAs(t, err, &ve)
				assert.Equal(t, []string{claude}, models(srv))
				assert.Empty(t, falls)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "3", res.Text)
			assert.Equal(t, llama, res.Model)
			require.Len(t, ends, 2)
			assert.Equal(t, llama, ends[0].Model)
			assert.Equal(t, llama, ends[1].Model)
			require.Len(t, falls, 1, "the next turn keeps to the fallback that answered")
			assert.Equal(t, converse.ModelFallback{Turn: 1, From: claude, To: llama, Err: falls[0].Err}, falls[0])
			assert.Equal(t, []string{claude, llama, llama}, models(srv))
			r := srv.Requests()[2].Messages[2].Content[0].(*types.ContentBlockMemberToolResult).Value
			assert.Empty(t, r.Status, "llama takes no status field")
			assertValid(t, c, claude)
		})
	}
}

// TestFallbackCoolsDown: turns keep to the fallback model that answered
// until a minute has passed (by Options.Clock), then start with their own
// model again; a turn of the own model that answers ends the stickiness.
func TestFallbackCoolsDown(t *testing.T) {
	throttled := true
	srv := bedrocktest.NewServer(bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		if aws.ToString(req.ModelId) == claude && throttled {
			return nil, bedrocktest.Throttling()
		}
		return bedrocktest.Text("ok"), nil
	}))
	t.Cleanup(srv.Close)
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	c := converse.New(srv.Client(noRetries), claude, nil, func(o *converse.Options) {
		o.ModelCalls = &converse.CallPolicy{Fallback: []string{llama}}
		o.Clock = func() time.Time { return now }
	})
	send := func() {
		t.Helper()
		_, err := c.Send(context.Background(), "hi")
		require.NoError(t, err)
	}
	send()
	now = now.Add(59 * time.Second)
	send()
	assert.Equal(t, []string{claude, llama, llama}, models(srv), "within the minute, straight to the fallback")
	now = now.Add(2 * time.Minute)
	send()
	assert.Equal(t, []string{claude, llama, llama, claude, llama}, models(srv), "after it, the own model first")
	throttled = false
	now = now.Add(2 * time.Minute)
	send()
	send()
	assert.Equal(t, []string{claude, llama, llama, claude, llama, claude, claude}, models(srv), "the own model answered: no stickiness")
}

// models are the models of the requests srv received.
func models(srv *bedrocktest.Server) []string {
	var ids []string
	for _, req := range srv.Requests() {
		ids = append(ids, aws.ToString(req.ModelId))
	}
	return ids
}

// TestFallbackThroughSteps: an engine driving the steps gets the fallback
// model's request from HandleResponse when the call failed with
// throttling.
func TestFallbackThroughSteps(t *testing.T) {
	c := converse.New(nil, claude, nil, func(o *converse.Options) { o.ModelCalls = &converse.CallPolicy{Fallback: []string{haiku}} })
	step, err := c.Begin(context.Background(), types.Message{Content: []types.ContentBlock{text("hi")}})
	require.NoError(t, err)
	assert.Equal(t, claude, aws.ToString(step.ModelCall.Input.ModelId))
	step, err = c.HandleResponse(context.Background(), step.ModelCall, nil, &types.ThrottlingException{Message: aws.String("slow down")})
	require.NoError(t, err)
	require.NotNil(t, step.ModelCall)
	assert.Equal(t, haiku, aws.ToString(step.ModelCall.Input.ModelId))
	assert.Equal(t, 1, step.ModelCall.Turn)
	_, err = c.HandleResponse(context.Background(), step.ModelCall, nil, &types.ThrottlingException{Message: aws.String("slow down")})
	var te *types.ThrottlingException
	require.ErrorAs(t, err, &te, "no fallback model is left")
}

// toolNames are the names of the tools a request offers, with the
// description of those offered as withdrawn marked so.
func toolNames(req *bedrocktest.Request) []string {
	var names []string
	if req.ToolConfig == nil {
		return nil
	}
	for _, tool := range req.ToolConfig.Tools {
		if spec, ok := tool.(*types.ToolMemberToolSpec); ok {
			name := aws.ToString(spec.Value.Name)
			if d := aws.ToString(spec.Value.Description); d == "No longer offered: do not call it. It appears only because earlier messages call it." {
				name += " (withdrawn)"
			}
			names = append(names, name)
		}
	}
	return names
}

// TestPrepareTurn: a turn hook changes the model, the tools, the tool choice,
// the system prompt and the inference settings of one call. The requests
// Bedrock gets are valid: the tool the history calls stays described as
// withdrawn, and cache points are placed for the model called.
func TestPrepareTurn(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "c1", Name: "lookup_1", Input: map[string]any{"query": "harbour"}}),
		bedrocktest.Text("done"),
	))
	var seen []converse.TurnPlan
	c := converse.New(client, claude, lookupTools(t, 3), func(o *converse.Options) {
		o.Cache = &converse.CachePolicy{}
		o.Request.System = systemPrompt(1500)
		o.PrepareTurn = func(_ context.Context, turn *converse.TurnPlan) error {
			seen = append(seen, *turn)
			switch turn.Number {
			case 1:
				turn.ModelID, turn.Offered = haiku, []string{"lookup_1"}
				turn.ToolChoice = &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String("lookup_1")}}
			case 2:
				turn.Offered = []string{"lookup_2"}
				turn.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "Answer in one word."}}
				turn.InferenceConfig = &types.InferenceConfiguration{MaxTokens: aws.Int32(50)}
			}
			return nil
		}
	})
	res, err := c.Send(context.Background(), "harbour?")
	require.NoError(t, err)
	assert.Equal(t, claude, res.Model)
	require.Len(t, seen, 2)
	assert.Equal(t, claude, seen[0].ModelID, "the hook sees what would be sent")
	assert.Nil(t, seen[0].Answered)
	assert.Equal(t, []converse.Call{{ID: "c1", Tool: "lookup_1", Input: []byte(`{"query":"harbour"}`)}}, seen[1].Answered)

	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, haiku, aws.ToString(reqs[0].ModelId))
	assert.Equal(t, []string{"lookup_1"}, toolNames(reqs[0]))
	assert.IsType(t, &types.ToolChoiceMemberTool{}, reqs[0].ToolConfig.ToolChoice)
	assert.Equal(t, claude, aws.ToString(reqs[1].ModelId))
	assert.Equal(t, []string{"lookup_2", "lookup_1 (withdrawn)"}, toolNames(reqs[1]))
	assert.Nil(t, reqs[1].ToolConfig.ToolChoice)
	assert.Equal(t, "Answer in one word.", reqs[1].System[0].(*types.SystemContentBlockMemberText).Value)
	assert.Equal(t, int32(50), aws.ToInt32(reqs[1].InferenceConfig.MaxTokens))
}

// TestPrepareTurnRefusesWhatBedrockWould: a hook's tool choice that the
// model called rejects, or that names a tool not offered, and an unknown
// tool, fail the Send before the call.
func TestPrepareTurnRefusesWhatBedrockWould(t *testing.T) {
	forceAdd := &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String("lookup_0")}}
	tests := []struct {
		name string
		hook func(*converse.TurnPlan)
		want error
	}{
		{"forcing on llama", func(t *converse.TurnPlan) { t.ModelID, t.ToolChoice = llama, forceAdd }, converse.ErrToolChoice},
		{"forcing a tool not offered", func(t *converse.TurnPlan) { t.Offered, t.ToolChoice = []string{"lookup_1"}, forceAdd }, converse.ErrToolChoice},
		{"unknown tool", func(t *converse.TurnPlan) { t.Offered = []string{"nope"} }, converse.ErrUnknownTool},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("never")))
			c := converse.New(client, claude, lookupTools(t, 2), func(o *converse.Options) {
				o.PrepareTurn = func(_ context.Context, turn *converse.TurnPlan) error { tt.hook(turn); return nil }
			})
			_, err := c.Send(context.Background(), "hi")
			require.ErrorIs(t, err, tt.want)
			assert.Empty(t, srv.Requests())
		})
	}
}

// TestStopAfterTool: a hook that stops once a given tool was answered ends the
// Send after that turn, with its text and no error. The conversation ends with
// the results, stopped, in its State too. The next Send's prompt is the next
// request's last message, after the results. Resume instead makes the call
// that was stopped.
func TestStopAfterTool(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("Saving it.", bedrocktest.Call{ID: "c1", Name: "lookup_0", Input: map[string]any{"query": "x"}}),
		bedrocktest.Text("fine"),
		bedrocktest.Text("saved"),
	))
	stop := func(_ context.Context, turn *converse.TurnPlan) error {
		for _, call := range turn.Answered {
			turn.Stop = turn.Stop || call.Tool == "lookup_0"
		}
		return nil
	}
	c := converse.New(client, claude, lookupTools(t, 1), func(o *converse.Options) { o.PrepareTurn = stop })
	res, err := c.Send(context.Background(), "save x")
	require.NoError(t, err)
	assert.Equal(t, "Saving it.", res.Text)
	assert.Equal(t, types.StopReasonToolUse, res.StopReason)
	assert.Equal(t, 1, res.Turns)
	assert.Len(t, srv.Requests(), 1)
	h := c.History()
	require.Len(t, h, 3)
	assert.Len(t, resultsOf(t, h[2]), 1)
	st := c.State()
	require.True(t, st.Stopped)
	b, err := json.Marshal(st)
	require.NoError(t, err)
	restored := &converse.State{}
	require.NoError(t, json.Unmarshal(b, restored))

	res, err = c.Send(context.Background(), "something else")
	require.NoError(t, err)
	assert.Equal(t, "fine", res.Text)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	requirePromptAfterResults(t, reqs[1], 1, "something else")
	assert.False(t, c.State().Stopped, "a new task")

	c, err = converse.Restore(client, lookupTools(t, 1), restored)
	require.NoError(t, err)
	res, err = c.Resume(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "saved", res.Text)
	assert.Len(t, srv.Requests()[2].Messages, 3, "the stopped call, made")
}

// TestRepairCall: a call of an unknown tool, or with input the schema
// rejects, is handed to RepairCall; the repaired call runs, and the
// history Bedrock gets next shows it as repaired. A call it leaves is
// answered with its error.
func TestRepairCall(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("",
			bedrocktest.Call{ID: "c1", Name: "calculater", Input: map[string]any{"a": 1, "b": 2}},
			bedrocktest.Call{ID: "c2", Name: "calculator", Input: map[string]any{"a": "3", "b": 4}},
			bedrocktest.Call{ID: "c3", Name: "weather", Input: map[string]any{}},
		),
		bedrocktest.Text("done"),
	))
	var problems []string
	_, err := converse.New(client, claude, calculator(t), func(o *converse.Options) {
		o.RepairCall = func(_ context.Context, call converse.Call, problem error) (converse.Call, bool) {
			problems = append(problems, call.ID)
			switch {
			case errors.Is(problem, converse.ErrUnknownTool) && call.Tool == "calculater":
				call.Tool = "calculator"
			case errors.Is(problem, tools.ErrInvalidInput):
				call.Input = []byte(`{"a":3,"b":4}`)
			default:
				return call, false
			}
			return call, true
		}
	}).Send(context.Background(), "sums")

	require.NoError(t, err)
	assert.Equal(t, []string{"c1", "c2", "c3"}, problems)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	var names, inputs []string
	for _, b := range reqs[1].Messages[1].Content {
		tu := b.(*types.ContentBlockMemberToolUse).Value
		in, err := tu.Input.MarshalSmithyDocument()
		require.NoError(t, err)
		names, inputs = append(names, aws.ToString(tu.Name)), append(inputs, string(in))
	}
	assert.Equal(t, []string{"calculator", "calculator", "weather"}, names)
	assert.Equal(t, []string{`{"a":1,"b":2}`, `{"a":3,"b":4}`, `{}`}, inputs)
	got := resultsOf(t, reqs[1].Messages[2])
	assert.Equal(t, "3", got[0].Text)
	assert.Equal(t, "7", got[1].Text)
	assert.Contains(t, got[2].Text, `unknown tool "weather"`)
}

// TestFallbackIsPricedAtItsModel: the turns a fallback model answers are
// priced at its prices, not at the conversation's model's, in the Result and
// in what a cost limit counts. A fallback without known prices makes the cost
// unknown.
func TestFallbackIsPricedAtItsModel(t *testing.T) {
	for _, tt := range []struct {
		name, fallback string
		priced         bool
	}{{"priced", novaPro, true}, {"unpriced", llama, false}} {
		t.Run(tt.name, func(t *testing.T) {
			srv := bedrocktest.NewServer(byModel(claude, bedrocktest.Throttling(), bedrocktest.Script(bedrocktest.Text("3"))))
			t.Cleanup(srv.Close)
			res, err := converse.New(srv.Client(noRetries), claude, nil, func(o *converse.Options) {
				o.ModelCalls = &converse.CallPolicy{Fallback: []string{tt.fallback}}
			}).Send(context.Background(), "1+2?")

			require.NoError(t, err)
			require.Equal(t, tt.fallback, res.Model)
			if !tt.priced {
				assert.Nil(t, res.CostUSD)
				return
			}
			p, ok := modelinfo.PricesOf(tt.fallback)
			require.True(t, ok)
			require.NotNil(t, res.CostUSD)
			assert.InDelta(t, res.Usage.Cost(p), *res.CostUSD, 1e-12)
			claudePrices, _ := modelinfo.PricesOf(claude)
			assert.NotEqual(t, res.Usage.Cost(claudePrices), *res.CostUSD)
		})
	}
}
