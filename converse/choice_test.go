package converse_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

const (
	llama   = "us.meta.llama3-3-70b-instruct-v1:0"
	sonnet4 = "us.anthropic.claude-sonnet-4-20250514-v1:0" // no native structured output
)

// thinkingOn enables Claude's extended thinking with a budget.
func thinkingOn(o *converse.Options) {
	o.Request.AdditionalModelRequestFields = document.NewLazyDocument(map[string]any{
		"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}})
}

// TestStructuredUnforced: where Bedrock rejects toolChoice any (a model
// without it, or extended thinking on), the final tool is offered with the
// default choice and the model told to call it. A text answer is corrected.
func TestStructuredUnforced(t *testing.T) {
	for _, tc := range []struct {
		name, model string
		opt         func(*converse.Options)
	}{
		{"llama", llama, func(*converse.Options) {}},
		{"claude thinking", sonnet4, thinkingOn},
		{"nova", novaPro, func(*converse.Options) {}}, // forced, for contrast
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, client := serve(t, bedrocktest.Script(
				bedrocktest.Text("It is 3 degrees in Oslo."),
				bedrocktest.ToolUse("", call("t1", finalFn, valid)),
				bedrocktest.Text("You are welcome."),
			))
			conv := converse.New(client, tc.model, weatherTools(t), tc.opt, func(o *converse.Options) {
				o.Request.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "Be brief."}}
			})
			got, res, err := converse.Structured[forecast](context.Background(), conv, "Weather in Oslo?")
			require.NoError(t, err)
			assert.Equal(t, forecast{City: "Oslo", Temp: 3}, got)
			assert.Equal(t, 2, res.Turns)

			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			forced := tc.model == novaPro
			for _, r := range reqs {
				require.Len(t, r.ToolConfig.Tools, 2)
				assert.Equal(t, finalFn, aws.ToString(r.ToolConfig.Tools[1].(*types.ToolMemberToolSpec).Value.Name))
				if forced {
					assert.Equal(t, &types.ToolChoiceMemberAny{}, r.ToolConfig.ToolChoice)
					assert.Len(t, r.System, 1, "a forced model needs no instruction")
					continue
				}
				assert.Nil(t, r.ToolConfig.ToolChoice)
				require.Len(t, r.System, 2, "the caller's system prompt, then the instruction")
				assert.Equal(t, "Be brief.", r.System[0].(*types.SystemContentBlockMemberText).Value)
				assert.Contains(t, r.System[1].(*types.SystemContentBlockMemberText).Value, "calling the tool "+finalFn)
			}
			kind, text := lastCorrection(t, reqs[1])
			assert.Equal(t, "text", kind)
			assert.Equal(t, "Error: the answer does not match the schema: answer by calling the tool final_forecast, with the answer as its input", text)

			_, err = conv.Send(context.Background(), "Thanks!")
			require.NoError(t, err)
			assert.Len(t, srv.Requests()[2].System, 1, "a plain Send carries no instruction")
		})
	}
}

// TestToolChoiceRejected: a forcing Options.ToolChoice that Bedrock would
// reject is a Go error before any model call.
func TestToolChoiceRejected(t *testing.T) {
	anyChoice := &types.ToolChoiceMemberAny{}
	named := &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String("get_weather")}}
	for _, tc := range []struct {
		name, model string
		choice      types.ToolChoice
		thinking    bool
		want        string // "" when the Send goes through
	}{
		{"any on llama", llama, anyChoice, false, "converse: unsupported tool choice: model " + llama + " does not support toolChoice any"},
		{"tool on llama", llama, named, false, "converse: unsupported tool choice: model " + llama + " does not support toolChoice tool"},
		{"tool on mistral large", "mistral.mistral-large-2407-v1:0", named, false, "does not support toolChoice tool"},
		{"any on mistral large", "mistral.mistral-large-2407-v1:0", anyChoice, false, ""},
		{"auto on llama", llama, &types.ToolChoiceMemberAuto{}, false, ""},
		{"any with thinking", sonnet4, anyChoice, true, "does not take toolChoice any, which forces tool use, with extended thinking enabled"},
		{"tool with thinking", sonnet4, named, true, "does not take toolChoice tool"},
		{"auto with thinking", sonnet4, &types.ToolChoiceMemberAuto{}, true, ""},
		{"any on claude", sonnet4, anyChoice, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("Hi.")))
			conv := converse.New(client, tc.model, weatherTools(t), func(o *converse.Options) {
				o.ToolChoice = tc.choice
				if tc.thinking {
					thinkingOn(o)
				}
			})
			_, err := conv.Send(context.Background(), "Hello")
			if tc.want == "" {
				require.NoError(t, err)
				assert.Len(t, srv.Requests(), 1)
				return
			}
			require.ErrorIs(t, err, converse.ErrToolChoice)
			assert.Contains(t, err.Error(), tc.want)
			assert.Empty(t, srv.Requests(), "no request is wasted")
			assert.Empty(t, conv.History())
		})
	}
	t.Run("no tools, no tool configuration", func(t *testing.T) {
		srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("Hi.")))
		_, err := converse.New(client, llama, nil, func(o *converse.Options) { o.ToolChoice = anyChoice }).Send(context.Background(), "Hello")
		require.NoError(t, err)
		assert.Len(t, srv.Requests(), 1)
	})
}
