package converse_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// TestStepsReturnTheirEvents: a step reports nothing itself. Its events
// come back in Step.Events, and they are those Send hands OnEvent for the
// same conversation: its turns and its trims, in order. OnEvent of a
// conversation driven by hand hears only the performers (the Executor's
// ToolStart and ToolEnd), never a step's TurnEnd.
func TestStepsReturnTheirEvents(t *testing.T) {
	ctx := context.Background()
	h, reg, opts := stepScenario(t)
	_, client := serve(t, h)
	var sent []converse.Event
	byHand := converse.New(client, claude, reg, opts, func(o *converse.Options) {
		o.Approver = func(_ context.Context, call converse.Call) (converse.Decision, error) { return call.Approve(), nil }
		o.OnEvent = func(ev converse.Event) { sent = append(sent, ev) }
	})
	_, err := byHand.Send(ctx, "Read the archive and tell ops.")
	require.NoError(t, err)

	h, reg, opts = stepScenario(t)
	_, client = serve(t, h)
	var heard []converse.Event
	c := converse.New(nil, claude, reg, opts, func(o *converse.Options) {
		o.OnEvent = func(ev converse.Event) { heard = append(heard, ev) }
	})
	var returned []converse.Event
	_, err = driveSteps(ctx, c, engine{call: converseWith(client), report: func(ev converse.Event) { returned = append(returned, ev) }}, "Read the archive and tell ops.")
	require.NoError(t, err)

	assert.Equal(t, turnsAndTrims(sent), turnsAndTrims(returned), "the steps' events are Send's")
	assert.NotEmpty(t, heard, "the Executor reports its calls")
	for _, ev := range heard {
		switch ev.(type) {
		case converse.ToolStart, converse.ToolEnd:
		default:
			t.Errorf("OnEvent heard %T from a step", ev)
		}
	}
}

// turnsAndTrims are the TurnEnd and Trimmed events of evs, without the
// durations a driver measures.
func turnsAndTrims(evs []converse.Event) []converse.Event {
	var out []converse.Event
	for _, ev := range evs {
		switch ev := ev.(type) {
		case converse.TurnEnd:
			ev.Duration, ev.Response = 0, converse.Response{}
			out = append(out, ev)
		case converse.Trimmed:
			out = append(out, ev)
		}
	}
	return out
}

// TestFailedStepReturnsItsEvents: a step that ends the run with an error
// returns the events it made with it, the TurnEnd (and its usage) of the
// reply that failed the run among them.
func TestFailedStepReturnsItsEvents(t *testing.T) {
	ctx := context.Background()
	cut := bedrocktest.ToolUse("Adding", bedrocktest.Call{ID: "t1", Name: "calculator"})
	cut.Output.StopReason = types.StopReasonMaxTokens // cut inside the call
	_, client := serve(t, bedrocktest.Script(cut))
	c := converse.New(nil, claude, calculator(t))
	step, err := c.Begin(ctx, types.Message{Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hi"}}})
	require.NoError(t, err)
	assert.Empty(t, step.Events)
	out, callErr := client.Converse(ctx, step.ModelCall.Input)
	step, err = c.HandleResponse(ctx, step.ModelCall, out, callErr)
	require.ErrorIs(t, err, converse.ErrMaxTokens)
	require.NotNil(t, step, "a failed step with events returns them")
	assert.Nil(t, step.Result)
	require.Len(t, turnsAndTrims(step.Events), 1)
	end := step.Events[len(step.Events)-1].(converse.TurnEnd)
	assert.Equal(t, types.StopReasonMaxTokens, end.StopReason)
	assert.Positive(t, end.Usage.TotalTokens)
}

// TestStepBudgetLeft: a step's Calls carry what the Budget leaves them, as
// Caller.Budget tells the calls of a Send, for a nested conversation their
// driver starts elsewhere; with nothing left it is a *BudgetError.
func TestStepBudgetLeft(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		limits converse.Limits
		left   int // output tokens; -1: nothing left
	}{
		{"room", converse.Limits{OutputTokens: 1000}, 995},
		{"spent", converse.Limits{OutputTokens: 5}, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, client := serve(t, bedrocktest.Script(bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "calculator", Input: map[string]any{"a": 1, "b": 2, "operation": "add"}})))
			c := converse.New(nil, claude, calculator(t), func(o *converse.Options) {
				o.Budget = &converse.Budget{Send: tt.limits}
			})
			step, err := c.Begin(ctx, types.Message{Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "1+2?"}}})
			require.NoError(t, err)
			left, err := step.BudgetLeft()
			require.NoError(t, err)
			assert.Nil(t, left, "no calls")
			out, callErr := client.Converse(ctx, step.ModelCall.Input)
			step, err = c.HandleResponse(ctx, step.ModelCall, out, callErr)
			require.NoError(t, err)
			require.Len(t, step.Calls, 1)
			left, err = step.BudgetLeft()
			if tt.left < 0 {
				var be *converse.BudgetError
				require.ErrorAs(t, err, &be)
				assert.Equal(t, "output tokens", be.Limit)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.left, left.Send.OutputTokens)
		})
	}
	c := converse.New(nil, claude, calculator(t))
	step, err := c.Begin(ctx, types.Message{Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "1+2?"}}})
	require.NoError(t, err)
	left, err := step.BudgetLeft()
	assert.Nil(t, left)
	assert.NoError(t, err)
}
