package wire

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func history() []types.Message {
	return []types.Message{
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Weather in Paris?"}}},
		{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{
			&types.ContentBlockMemberText{Value: "Checking."},
			&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
				ToolUseId: aws.String("t1"), Name: aws.String("get_weather"),
				Input: document.NewLazyDocument(map[string]any{"city": "Paris", "days": 2}),
			}},
		}},
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{
			&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
				ToolUseId: aws.String("t1"), Status: types.ToolResultStatusError,
				Content: []types.ToolResultContentBlock{
					&types.ToolResultContentBlockMemberJson{Value: document.NewLazyDocument(map[string]any{"error": "timeout"})},
					&types.ToolResultContentBlockMemberText{Value: "try later"},
				},
			}},
		}},
	}
}

const historyJSON = `[{"content":[{"text":"Weather in Paris?"}],"role":"user"},` +
	`{"content":[{"text":"Checking."},{"toolUse":{"input":{"city":"Paris","days":2},"name":"get_weather","toolUseId":"t1"}}],"role":"assistant"},` +
	`{"content":[{"toolResult":{"content":[{"json":{"error":"timeout"}},{"text":"try later"}],"status":"error","toolUseId":"t1"}}],"role":"user"}]`

func TestEncodeMessages(t *testing.T) {
	got, err := EncodeMessages(history())
	require.NoError(t, err)
	assert.Equal(t, historyJSON, string(got), "EncodeMessages")
	empty, err := EncodeMessages(nil)
	require.NoError(t, err)
	assert.Equal(t, "[]", string(empty), "EncodeMessages(nil)")
}

func TestMessagesRoundTrip(t *testing.T) {
	msgs, err := DecodeMessages([]byte(historyJSON))
	require.NoError(t, err)
	require.Len(t, msgs, 3)
	tu := msgs[1].Content[1].(*types.ContentBlockMemberToolUse).Value
	var input struct {
		City string
		Days int
	}
	require.NoError(t, tu.Input.UnmarshalSmithyDocument(&input))
	assert.Equal(t, "Paris", input.City, "tool input")
	assert.Equal(t, 2, input.Days, "tool input")
	again, err := EncodeMessages(msgs)
	require.NoError(t, err)
	assert.Equal(t, historyJSON, string(again), "round trip")
}

func TestDecodeMessagesErrors(t *testing.T) {
	for _, in := range []string{"", "{}", `[{"role":`, "null", `"x"`, `[{"content":"nope"}]`} {
		_, err := DecodeMessages([]byte(in))
		assert.Error(t, err, "DecodeMessages(%q) succeeded", in)
	}
	msgs, err := DecodeMessages([]byte(" [] \n"))
	require.NoError(t, err)
	assert.Empty(t, msgs, "DecodeMessages([])")
}

func TestConverseInputRoundTrip(t *testing.T) {
	in := &bedrockruntime.ConverseInput{
		ModelId:         aws.String("anthropic.claude-3-5-sonnet-20240620-v1:0"),
		Messages:        history(),
		System:          []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "Be brief."}},
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(512), Temperature: aws.Float32(0.5), StopSequences: []string{"END"}},
		ToolConfig: &types.ToolConfiguration{
			Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
				Name:        aws.String("get_weather"),
				Description: aws.String("Weather by city"),
				InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(map[string]any{"type": "object"})},
			}}},
			ToolChoice: &types.ToolChoiceMemberAuto{},
		},
		AdditionalModelRequestFields:      document.NewLazyDocument(map[string]any{"top_k": 5, "stop": []any{"x"}}),
		AdditionalModelResponseFieldPaths: []string{"/stop_sequence"},
		RequestMetadata:                   map[string]string{"team": "a"},
		PromptVariables:                   map[string]types.PromptVariableValues{"city": &types.PromptVariableValuesMemberText{Value: "Oslo"}},
		GuardrailConfig:                   &types.GuardrailConfiguration{GuardrailIdentifier: aws.String("gr"), GuardrailVersion: aws.String("1"), Trace: types.GuardrailTraceEnabled},
		PerformanceConfig:                 &types.PerformanceConfiguration{Latency: types.PerformanceConfigLatencyOptimized},
		ServiceTier:                       &types.ServiceTier{Type: types.ServiceTierTypeFlex},
		ProjectIdentifier:                 aws.String("proj-1"),
		OutputConfig: &types.OutputConfig{TextFormat: &types.OutputFormat{Type: types.OutputFormatTypeJsonSchema,
			Structure: &types.OutputFormatStructureMemberJsonSchema{Value: types.JsonSchemaDefinition{Name: aws.String("a"), Schema: aws.String(`{"type":"object"}`)}}}},
	}
	body, err := EncodeConverseInput(in)
	require.NoError(t, err)
	got, err := DecodeConverseInput(body)
	require.NoError(t, err)
	assert.Nil(t, got.ModelId, "the ModelId is not in the body")
	// The decoder lists the members it reads: a field the SDK adds must be
	// set above and read back, or this fails naming it.
	sent, read := reflect.ValueOf(in).Elem(), reflect.ValueOf(got).Elem()
	for i := range sent.NumField() {
		if f := sent.Type().Field(i); f.IsExported() && f.Name != "ModelId" {
			assert.False(t, sent.Field(i).IsZero(), "the test sets no %s", f.Name)
			assert.False(t, read.Field(i).IsZero(), "%s is not decoded", f.Name)
		}
	}
	require.Len(t, got.Messages, 3)
	require.Len(t, got.System, 1)
	require.NotNil(t, got.ToolConfig)
	require.NotNil(t, got.InferenceConfig)
	assert.Equal(t, int32(512), aws.ToInt32(got.InferenceConfig.MaxTokens), "inferenceConfig.maxTokens")
	assert.Equal(t, []string{"END"}, got.InferenceConfig.StopSequences, "inferenceConfig.stopSequences")
	assert.IsType(t, &types.ToolChoiceMemberAuto{}, got.ToolConfig.ToolChoice, "toolChoice")
	assert.Equal(t, []string{"/stop_sequence"}, got.AdditionalModelResponseFieldPaths, "additionalModelResponseFieldPaths")
	// Every field survives a second trip byte for byte.
	want, _ := EncodeConverseInput(in)
	again, err := EncodeConverseInput(got)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(again), "round trip")
}

func TestDecodeConverseInputErrors(t *testing.T) {
	for _, in := range []string{"{", "[]", `{"messages":{}}`, `{"messages":[{"role":"user","content":[{"text":1}]}]}`} {
		_, err := DecodeConverseInput([]byte(in))
		assert.Error(t, err, "DecodeConverseInput(%q) succeeded", in)
	}
	in, err := DecodeConverseInput([]byte(`{"messages":[],"somethingNew":{"a":[1,{"b":2}]}}`))
	require.NoError(t, err, "unknown members must be skipped")
	assert.Empty(t, in.Messages)
}

func TestConverseOutputRoundTrip(t *testing.T) {
	out := &bedrockruntime.ConverseOutput{
		Output:     &types.ConverseOutputMemberMessage{Value: history()[1]},
		StopReason: types.StopReasonToolUse,
		Usage:      &types.TokenUsage{InputTokens: aws.Int32(10), OutputTokens: aws.Int32(5), TotalTokens: aws.Int32(15)},
		Metrics:    &types.ConverseMetrics{LatencyMs: aws.Int64(42)},
	}
	body, err := EncodeConverseOutput(out)
	require.NoError(t, err)
	const want = `{"metrics":{"latencyMs":42},"output":{"message":{"content":[{"text":"Checking."},` +
		`{"toolUse":{"input":{"city":"Paris","days":2},"name":"get_weather","toolUseId":"t1"}}],"role":"assistant"}},` +
		`"stopReason":"tool_use","usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15}}`
	assert.Equal(t, want, string(body), "EncodeConverseOutput")
	got, err := DecodeConverseOutput(body)
	require.NoError(t, err)
	assert.Equal(t, types.StopReasonToolUse, got.StopReason)
	require.NotNil(t, got.Metrics)
	assert.Equal(t, int64(42), aws.ToInt64(got.Metrics.LatencyMs))
	again, _ := EncodeConverseOutput(got)
	assert.Equal(t, want, string(again), "round trip")
	_, err = DecodeConverseOutput([]byte("nope"))
	assert.Error(t, err, "DecodeConverseOutput accepted garbage")
}
