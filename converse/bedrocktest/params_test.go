package bedrocktest

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/recording"
)

func TestValidateParams(t *testing.T) {
	const (
		llama    = "us.meta.llama3-3-70b-instruct-v1:0"
		mistral  = "mistral.mistral-large-2407-v1:0"
		nova     = "us.amazon.nova-pro-v1:0"
		sonnet4  = "us.anthropic.claude-sonnet-4-20250514-v1:0"
		sonnet45 = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

		anyUnsupported  = "This model doesn't support the toolConfig.toolChoice.any field. Remove toolConfig.toolChoice.any and try again."
		toolUnsupported = "This model doesn't support the toolConfig.toolChoice.tool field. Remove toolConfig.toolChoice.tool and try again."
		thinkingForced  = "The model returned the following errors: Thinking may not be enabled when tool_choice forces tool use."
		bothSampling    = "The model returned the following errors: `temperature` and `top_p` cannot both be specified for this model. Please use only one."
	)
	anyChoice := &types.ToolChoiceMemberAny{}
	toolChoice := &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String("get_weather")}}
	autoChoice := &types.ToolChoiceMemberAuto{}
	thinking := document.NewLazyDocument(map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 2048}})
	reasoning := document.NewLazyDocument(map[string]any{"reasoning_config": map[string]any{"type": "enabled", "budget_tokens": 1024}})
	adaptive := document.NewLazyDocument(map[string]any{"thinking": map[string]any{"type": "adaptive"}})
	f := aws.Float32
	tests := []struct {
		name    string
		model   string
		choice  types.ToolChoice
		fields  document.Interface
		temp, p *float32
		want    string // "" for valid
	}{
		{name: "any on claude", model: sonnet4, choice: anyChoice},
		{name: "tool on nova", model: nova, choice: toolChoice},
		{name: "any on mistral large", model: mistral, choice: anyChoice},
		{name: "tool on mistral large", model: mistral, choice: toolChoice, want: toolUnsupported},
		{name: "any on llama", model: llama, choice: anyChoice, want: anyUnsupported},
		{name: "tool on llama", model: llama, choice: toolChoice, want: toolUnsupported},
		{name: "auto on llama", model: llama, choice: autoChoice},
		{name: "any with thinking", model: sonnet4, choice: anyChoice, fields: thinking, want: thinkingForced},
		{name: "tool with thinking", model: sonnet4, choice: toolChoice, fields: thinking, want: thinkingForced},
		{name: "any with reasoning_config", model: "anthropic.claude-3-7-sonnet-20250219-v1:0", choice: anyChoice, fields: reasoning, want: thinkingForced},
		{name: "auto with thinking", model: sonnet4, choice: autoChoice, fields: thinking},
		{name: "no choice with thinking", model: sonnet4, fields: thinking},
		{name: "any with adaptive thinking", model: "anthropic.claude-opus-4-6-v1", choice: anyChoice, fields: adaptive, want: thinkingForced},
		{name: "temperature and topP on sonnet 4", model: sonnet4, temp: f(0.5), p: f(0.9)},
		{name: "temperature and topP on sonnet 4.5", model: sonnet45, temp: f(0.5), p: f(0.9), want: bothSampling},
		{name: "temperature and topP on haiku 4.5", model: "anthropic.claude-haiku-4-5-20251001-v1:0", temp: f(0), p: f(1), want: bothSampling},
		{name: "temperature and topP on sonnet 4.6", model: "global.anthropic.claude-sonnet-4-6", temp: f(0.2), p: f(0.5), want: bothSampling},
		{name: "temperature alone on sonnet 4.5", model: sonnet45, temp: f(0.5)},
		{name: "topP alone on sonnet 4.5", model: sonnet45, p: f(0.9)},
		{name: "temperature 1 on claude", model: sonnet4, temp: f(1)},
		{name: "temperature 1.5 on claude", model: sonnet4, temp: f(1.5),
			want: "1 validation error detected: Value '1.5' at 'inferenceConfig.temperature' failed to satisfy constraint: Member must have value less than or equal to 1"},
		{name: "temperature 2 on nova", model: nova, temp: f(2),
			want: "1 validation error detected: Value '2.0' at 'inferenceConfig.temperature' failed to satisfy constraint: Member must have value less than or equal to 1"},
		{name: "negative topP", model: sonnet4, p: f(-0.5),
			want: "1 validation error detected: Value '-0.5' at 'inferenceConfig.topP' failed to satisfy constraint: Member must have value greater than or equal to 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &Request{Operation: recording.OpConverse, ConverseInput: bedrockruntime.ConverseInput{ModelId: aws.String(tt.model), Messages: []types.Message{user(text("hi"))}, AdditionalModelRequestFields: tt.fields}}
			if tt.choice != nil {
				req.ToolConfig = weatherTools()
				req.ToolConfig.ToolChoice = tt.choice
			}
			if tt.temp != nil || tt.p != nil {
				req.InferenceConfig = &types.InferenceConfiguration{Temperature: tt.temp, TopP: tt.p}
			}
			e := Validate(req)
			assertVerdict(t, e, tt.want)
		})
	}
}

// TestParamsThroughClient sends the requests through the SDK's client, so
// that the fields are checked as they arrive on the wire.
func TestParamsThroughClient(t *testing.T) {
	srv := NewServer(Script(Text("unreached")))
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()
	var ve *types.ValidationException

	tools := weatherTools()
	tools.ToolChoice = &types.ToolChoiceMemberAny{}
	_, err := client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId: aws.String("meta.llama3-3-70b-instruct-v1:0"), Messages: []types.Message{user(text("a"))}, ToolConfig: tools,
	})
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, ve.ErrorMessage(), "toolConfig.toolChoice.any")

	_, err = client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId: aws.String(testModel), Messages: []types.Message{user(text("a"))}, ToolConfig: tools,
		AdditionalModelRequestFields: document.NewLazyDocument(map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}}),
	})
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, ve.ErrorMessage(), "Thinking may not be enabled when tool_choice forces tool use")

	_, err = client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId: aws.String("anthropic.claude-sonnet-4-5-20250929-v1:0"), Messages: []types.Message{user(text("a"))},
		InferenceConfig: &types.InferenceConfiguration{Temperature: aws.Float32(0.3), TopP: aws.Float32(0.8)},
	})
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, ve.ErrorMessage(), "cannot both be specified")
}

// assertVerdict checks Validate's answer: nil when want is empty, else a
// ValidationException whose message is want.
func assertVerdict(t *testing.T, e *Error, want string) {
	t.Helper()
	if want == "" {
		assert.Nil(t, e)
		return
	}
	require.NotNil(t, e)
	assert.Equal(t, want, e.Message)
}
