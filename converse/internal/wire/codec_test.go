package wire

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
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
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != historyJSON {
		t.Errorf("EncodeMessages =\n%s\nwant\n%s", got, historyJSON)
	}
	empty, err := EncodeMessages(nil)
	if err != nil || string(empty) != "[]" {
		t.Errorf("EncodeMessages(nil) = %s, %v; want [], nil", empty, err)
	}
}

func TestMessagesRoundTrip(t *testing.T) {
	msgs, err := DecodeMessages([]byte(historyJSON))
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 {
		t.Fatalf("got %d messages, want 3", len(msgs))
	}
	tu := msgs[1].Content[1].(*types.ContentBlockMemberToolUse).Value
	var input struct {
		City string
		Days int
	}
	if err := tu.Input.UnmarshalSmithyDocument(&input); err != nil {
		t.Fatal(err)
	}
	if input.City != "Paris" || input.Days != 2 {
		t.Errorf("tool input = %+v", input)
	}
	again, err := EncodeMessages(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != historyJSON {
		t.Errorf("round trip =\n%s\nwant\n%s", again, historyJSON)
	}
}

func TestDecodeMessagesErrors(t *testing.T) {
	for _, in := range []string{"", "{}", `[{"role":`, "null", `"x"`, `[{"content":"nope"}]`} {
		if _, err := DecodeMessages([]byte(in)); err == nil {
			t.Errorf("DecodeMessages(%q) succeeded", in)
		}
	}
	msgs, err := DecodeMessages([]byte(" [] \n"))
	if err != nil || len(msgs) != 0 {
		t.Errorf("DecodeMessages([]) = %v, %v", msgs, err)
	}
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
		OutputConfig: &types.OutputConfig{TextFormat: &types.OutputFormat{Type: types.OutputFormatTypeJsonSchema,
			Structure: &types.OutputFormatStructureMemberJsonSchema{Value: types.JsonSchemaDefinition{Name: aws.String("a"), Schema: aws.String(`{"type":"object"}`)}}}},
	}
	body, err := EncodeConverseInput(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeConverseInput(body)
	if err != nil {
		t.Fatal(err)
	}
	if got.ModelId != nil {
		t.Errorf("ModelId = %q; it is not in the body", *got.ModelId)
	}
	if len(got.Messages) != 3 || len(got.System) != 1 || got.ToolConfig == nil || got.InferenceConfig == nil {
		t.Fatalf("decoded %+v", got)
	}
	if aws.ToInt32(got.InferenceConfig.MaxTokens) != 512 || !reflect.DeepEqual(got.InferenceConfig.StopSequences, []string{"END"}) {
		t.Errorf("inferenceConfig = %+v", got.InferenceConfig)
	}
	if _, ok := got.ToolConfig.ToolChoice.(*types.ToolChoiceMemberAuto); !ok {
		t.Errorf("toolChoice = %T", got.ToolConfig.ToolChoice)
	}
	if !reflect.DeepEqual(got.AdditionalModelResponseFieldPaths, []string{"/stop_sequence"}) {
		t.Errorf("additionalModelResponseFieldPaths = %v", got.AdditionalModelResponseFieldPaths)
	}
	// Every field survives a second trip byte for byte.
	want, _ := EncodeConverseInput(in)
	again, err := EncodeConverseInput(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(want) {
		t.Errorf("round trip:\n got %s\nwant %s", again, want)
	}
}

func TestDecodeConverseInputErrors(t *testing.T) {
	for _, in := range []string{"{", "[]", `{"messages":{}}`, `{"messages":[{"role":"user","content":[{"text":1}]}]}`} {
		if _, err := DecodeConverseInput([]byte(in)); err == nil {
			t.Errorf("DecodeConverseInput(%q) succeeded", in)
		}
	}
	in, err := DecodeConverseInput([]byte(`{"messages":[],"somethingNew":{"a":[1,{"b":2}]}}`))
	if err != nil {
		t.Fatalf("unknown members must be skipped: %v", err)
	}
	if len(in.Messages) != 0 {
		t.Errorf("messages = %v", in.Messages)
	}
}

func TestConverseOutputRoundTrip(t *testing.T) {
	out := &bedrockruntime.ConverseOutput{
		Output:     &types.ConverseOutputMemberMessage{Value: history()[1]},
		StopReason: types.StopReasonToolUse,
		Usage:      &types.TokenUsage{InputTokens: aws.Int32(10), OutputTokens: aws.Int32(5), TotalTokens: aws.Int32(15)},
		Metrics:    &types.ConverseMetrics{LatencyMs: aws.Int64(42)},
	}
	body, err := EncodeConverseOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"metrics":{"latencyMs":42},"output":{"message":{"content":[{"text":"Checking."},` +
		`{"toolUse":{"input":{"city":"Paris","days":2},"name":"get_weather","toolUseId":"t1"}}],"role":"assistant"}},` +
		`"stopReason":"tool_use","usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15}}`
	if string(body) != want {
		t.Errorf("EncodeConverseOutput =\n%s\nwant\n%s", body, want)
	}
	got, err := DecodeConverseOutput(body)
	if err != nil {
		t.Fatal(err)
	}
	if got.StopReason != types.StopReasonToolUse || aws.ToInt64(got.Metrics.LatencyMs) != 42 {
		t.Errorf("decoded %+v", got)
	}
	again, _ := EncodeConverseOutput(got)
	if string(again) != want {
		t.Errorf("round trip = %s", again)
	}
	if _, err := DecodeConverseOutput([]byte("nope")); err == nil {
		t.Error("DecodeConverseOutput accepted garbage")
	}
}
