package bedrocktest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/recording"
)

func thinkingFields(budget any, extra map[string]any) document.Interface {
	thinking := map[string]any{"type": "enabled"}
	if budget != nil {
		thinking["budget_tokens"] = budget
	}
	f := map[string]any{"thinking": thinking}
	for k, v := range extra {
		f[k] = v
	}
	return document.NewLazyDocument(f)
}

func TestValidateThinking(t *testing.T) {
	const sonnet4 = "us.anthropic.claude-sonnet-4-20250514-v1:0"
	i, f := aws.Int32, aws.Float32
	tests := []struct {
		name   string
		model  string
		fields document.Interface
		ic     *types.InferenceConfiguration
		want   string // "" for valid
	}{
		{name: "budget 1024 under max tokens", fields: thinkingFields(1024, nil), ic: &types.InferenceConfiguration{MaxTokens: i(4000)}},
		{name: "budget without max tokens", fields: thinkingFields(2048, nil)},
		{name: "budget missing", fields: thinkingFields(nil, nil), want: budgetMissing},
		{name: "budget 1023", fields: thinkingFields(1023, nil), want: budgetTooSmall},
		{name: "reasoning_config budget 500", model: "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
			fields: document.NewLazyDocument(map[string]any{"reasoning_config": map[string]any{"type": "enabled", "budget_tokens": 500}}), want: budgetTooSmall},
		{name: "budget equal to max tokens", fields: thinkingFields(2048, nil), ic: &types.InferenceConfiguration{MaxTokens: i(2048)}, want: budgetOverMax},
		{name: "budget over max tokens", fields: thinkingFields(4096, nil), ic: &types.InferenceConfiguration{MaxTokens: i(2048)}, want: budgetOverMax},
		{name: "budget over max tokens with interleaved thinking", ic: &types.InferenceConfiguration{MaxTokens: i(2048)},
			fields: thinkingFields(4096, map[string]any{"anthropic_beta": []string{"interleaved-thinking-2025-05-14"}})},
		{name: "temperature 1", fields: thinkingFields(1024, nil), ic: &types.InferenceConfiguration{Temperature: f(1)}},
		{name: "temperature 0.5", fields: thinkingFields(1024, nil), ic: &types.InferenceConfiguration{Temperature: f(0.5)}, want: thinkingTemp},
		{name: "topP 0.95", fields: thinkingFields(1024, nil), ic: &types.InferenceConfiguration{TopP: f(0.95)}},
		{name: "topP 0.9", fields: thinkingFields(1024, nil), ic: &types.InferenceConfiguration{TopP: f(0.9)}, want: thinkingTopP},
		{name: "top_k", fields: thinkingFields(1024, map[string]any{"top_k": 40}), want: thinkingTopK},
		{name: "top_k without thinking", fields: document.NewLazyDocument(map[string]any{"top_k": 40})},
		{name: "temperature 0.5 with adaptive thinking", model: "anthropic.claude-opus-4-6-v1",
			fields: document.NewLazyDocument(map[string]any{"thinking": map[string]any{"type": "adaptive"}}), ic: &types.InferenceConfiguration{Temperature: f(0.5)}},
		{name: "thinking fields on nova are not claude's", model: "us.amazon.nova-pro-v1:0", fields: thinkingFields(10, nil)},
		{name: "max tokens 0", ic: &types.InferenceConfiguration{MaxTokens: i(0)},
			want: "1 validation error detected: Value '0' at 'inferenceConfig.maxTokens' failed to satisfy constraint: Member must have value greater than or equal to 1"},
		{name: "max tokens -3 on nova", model: "us.amazon.nova-pro-v1:0", ic: &types.InferenceConfiguration{MaxTokens: i(-3)},
			want: "1 validation error detected: Value '-3' at 'inferenceConfig.maxTokens' failed to satisfy constraint: Member must have value greater than or equal to 1"},
		{name: "max tokens 1", ic: &types.InferenceConfiguration{MaxTokens: i(1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := tt.model
			if model == "" {
				model = sonnet4
			}
			e := Validate(&Request{Operation: recording.OpConverse, ConverseInput: bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: []types.Message{user(text("hi"))}, AdditionalModelRequestFields: tt.fields, InferenceConfig: tt.ic}})
			assertVerdict(t, e, tt.want)
		})
	}
}

// TestValidateThinkingLoop: with extended thinking, a request continuing
// a tool loop must send back the reasoning that opened it first; earlier
// turns' reasoning may be left out.
func TestValidateThinkingLoop(t *testing.T) {
	const sonnet4 = "us.anthropic.claude-sonnet-4-20250514-v1:0"
	reasoning := &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{
		Value: types.ReasoningTextBlock{Text: aws.String("plan"), Signature: aws.String("sig")},
	}}
	redacted := &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{Value: []byte("x")}}
	ok := result("t1", types.ToolResultStatusSuccess)
	found := func(n int, typ string) string { return fmt.Sprintf(thinkingFirst, n, typ) }
	tests := []struct {
		name   string
		model  string
		fields document.Interface // thinkingFields(1024, nil) when nil
		msgs   []types.Message
		want   string
	}{
		{name: "the loop's reasoning first", msgs: []types.Message{user(text("hi")), assistant(reasoning, use("t1")), user(ok)}},
		{name: "redacted reasoning first", msgs: []types.Message{user(text("hi")), assistant(redacted, use("t1")), user(ok)}},
		{name: "the loop's first call without it", msgs: []types.Message{user(text("hi")), assistant(use("t1")), user(ok)}, want: found(1, "tool_use")},
		{name: "text before the reasoning", msgs: []types.Message{user(text("hi")), assistant(text("let me see"), reasoning, use("t1")), user(ok)}, want: found(1, "text")},
		{name: "a later call without it", msgs: []types.Message{user(text("hi")), assistant(reasoning, use("t1")), user(ok),
			assistant(use("t2")), user(result("t2", types.ToolResultStatusSuccess))}},
		{name: "the loop after the first pair dropped", msgs: []types.Message{user(text("hi")),
			assistant(use("t2")), user(result("t2", types.ToolResultStatusSuccess))}, want: found(1, "tool_use")},
		{name: "the loop of a later prompt", msgs: []types.Message{user(text("hi")), assistant(text("hello")), user(text("weather?")),
			assistant(use("t1")), user(ok)}, want: found(3, "tool_use")},
		{name: "an earlier turn's reasoning left out", msgs: []types.Message{user(text("hi")), assistant(use("t1")), user(ok),
			assistant(text("sunny")), user(text("and tomorrow?")), assistant(reasoning, use("t2")), user(result("t2", types.ToolResultStatusSuccess))}},
		{name: "a new prompt needs none", msgs: []types.Message{user(text("hi")), assistant(use("t1")), user(ok), assistant(text("sunny")), user(text("thanks"))}},
		{name: "without thinking", fields: document.NewLazyDocument(map[string]any{}), msgs: []types.Message{user(text("hi")), assistant(use("t1")), user(ok)}},
		{name: "not claude", model: "us.amazon.nova-pro-v1:0", msgs: []types.Message{user(text("hi")), assistant(use("t1")), user(ok)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model, fields := tt.model, tt.fields
			if model == "" {
				model = sonnet4
			}
			if fields == nil {
				fields = thinkingFields(1024, nil)
			}
			e := Validate(&Request{Operation: recording.OpConverse, ConverseInput: bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: tt.msgs,
				ToolConfig: &types.ToolConfiguration{Tools: []types.Tool{toolSpec("get_weather", map[string]any{"type": "object"})}}, AdditionalModelRequestFields: fields}})
			assertVerdict(t, e, tt.want)
		})
	}
}

func TestValidateClosedSchemas(t *testing.T) {
	const (
		missing  = "For 'object' type, 'additionalProperties' must be explicitly set to false"
		notFalse = "For 'object' type, 'additionalProperties: true' is not supported. Please set 'additionalProperties' to false"
	)
	closed := `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}},"additionalProperties":false}},"additionalProperties":false}`
	tests := []struct {
		name   string
		schema string
		strict bool // the schema is a strict tool's input schema, not the output format's
		want   string
	}{
		{name: "closed output schema", schema: closed},
		{name: "open output schema", schema: `{"type":"object","properties":{"a":{"type":"string"}}}`,
			want: "The model returned the following errors: output_config.format.schema: " + missing},
		{name: "nested open output schema", schema: `{"type":"object","properties":{"a":{"type":"array","items":{"type":"object"}}},"additionalProperties":false}`,
			want: "The model returned the following errors: output_config.format.schema: " + missing},
		{name: "output schema allowing extra properties", schema: `{"type":"object","additionalProperties":true}`,
			want: "The model returned the following errors: output_config.format.schema: " + notFalse},
		{name: "closed strict tool", schema: closed, strict: true},
		{name: "open strict tool", schema: `{"type":"object","properties":{"a":{"type":"string"}}}`, strict: true,
			want: "The model returned the following errors: tools.0.custom: " + missing},
		{name: "map-typed strict tool", schema: `{"type":"object","additionalProperties":{"type":"integer"}}`, strict: true,
			want: "The model returned the following errors: tools.0.custom: " + notFalse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A model with structured output: testModel, Claude 3.5 Sonnet, has none.
			req := &Request{Operation: recording.OpConverse, ConverseInput: bedrockruntime.ConverseInput{ModelId: aws.String("us.anthropic.claude-sonnet-4-5-20250929-v1:0"), Messages: []types.Message{user(text("hi"))}}}
			if tt.strict {
				req.ToolConfig = &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
					Name: aws.String("f"), Strict: aws.Bool(true),
					InputSchema: &types.ToolInputSchemaMemberJson{Value: rawDocument(t, tt.schema)},
				}}}}
			} else {
				req.OutputConfig = outputSchema(tt.schema)
			}
			e := Validate(req)
			assertVerdict(t, e, tt.want)
		})
	}
}

func rawDocument(t *testing.T, schema string) document.Interface {
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(schema), &m))
	return document.NewLazyDocument(m)
}

func outputSchema(schema string) *types.OutputConfig {
	return &types.OutputConfig{TextFormat: &types.OutputFormat{Type: types.OutputFormatTypeJsonSchema,
		Structure: &types.OutputFormatStructureMemberJsonSchema{Value: types.JsonSchemaDefinition{Name: aws.String("answer"), Schema: aws.String(schema)}}}}
}

// TestThinkingThroughClient sends the new rules' requests through the SDK's
// client, so that the fields are checked as they arrive on the wire.
func TestThinkingThroughClient(t *testing.T) {
	srv := NewServer(Script(Text("unreached")))
	defer srv.Close()
	ctx := context.Background()
	var ve *types.ValidationException
	for want, in := range map[string]*bedrockruntime.ConverseInput{
		budgetTooSmall: {AdditionalModelRequestFields: thinkingFields(512, nil)},
		budgetOverMax:  {AdditionalModelRequestFields: thinkingFields(2048, nil), InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(1024)}},
		thinkingTemp:   {AdditionalModelRequestFields: thinkingFields(1024, nil), InferenceConfig: &types.InferenceConfiguration{Temperature: aws.Float32(0.2)}},
		"Value '0' at 'inferenceConfig.maxTokens'":                                                               {InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(0)}},
		"output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly set to false": {OutputConfig: outputSchema(`{"type":"object","properties":{"a":{"type":"string"}}}`)},
	} {
		in.ModelId, in.Messages = aws.String(testModel), []types.Message{user(text("a"))}
		_, err := srv.Client().Converse(ctx, in)
		require.ErrorAs(t, err, &ve, want)
		assert.Contains(t, ve.ErrorMessage(), want)
	}
}
