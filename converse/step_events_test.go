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
