package bedrocktest

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/recording"
)

// TestValidateStructuredOutput: outputConfig.textFormat goes only to the
// models with structured output, and never beside a document or search
// result with citations enabled, in a message or a tool result.
func TestValidateStructuredOutput(t *testing.T) {
	const (
		sonnet45 = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
		closed   = `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`
	)
	cites := func(on bool) *types.CitationsConfig { return &types.CitationsConfig{Enabled: aws.Bool(on)} }
	doc := func(on bool) types.ContentBlock {
		return &types.ContentBlockMemberDocument{Value: types.DocumentBlock{Format: types.DocumentFormatTxt, Name: aws.String("report"),
			Source: &types.DocumentSourceMemberBytes{Value: []byte("a report")}, Citations: cites(on)}}
	}
	search := types.SearchResultBlock{Source: aws.String("https://example.com"), Title: aws.String("Example"),
		Content: []types.SearchResultContentBlock{{Text: aws.String("a result")}}, Citations: cites(true)}
	tests := []struct {
		name, model string
		msgs        []types.Message
		want        string
	}{
		{name: "a model with structured output", model: sonnet45, msgs: []types.Message{user(text("hi"))}},
		{name: "Claude 3.5 Sonnet", model: "us.anthropic.claude-3-5-sonnet-20241022-v2:0", msgs: []types.Message{user(text("hi"))}, want: noStructuredOutput},
		{name: "Nova", model: "us.amazon.nova-pro-v1:0", msgs: []types.Message{user(text("hi"))}, want: noStructuredOutput},
		{name: "Llama", model: "us.meta.llama3-3-70b-instruct-v1:0", msgs: []types.Message{user(text("hi"))}, want: noStructuredOutput},
		{name: "an ID that names no model", model: "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc", msgs: []types.Message{user(text("hi"))}},
		{name: "a document with citations", model: sonnet45, msgs: []types.Message{user(doc(true), text("hi"))}, want: citationsWithSchema},
		{name: "a document without citations", model: sonnet45, msgs: []types.Message{user(doc(false), text("hi"))}},
		{name: "a search result with citations", model: sonnet45, msgs: []types.Message{user(&types.ContentBlockMemberSearchResult{Value: search}, text("hi"))}, want: citationsWithSchema},
		{name: "a tool result's document with citations", model: sonnet45, msgs: []types.Message{user(text("hi")), assistant(use("t1")),
			user(result("t1", "", &types.ToolResultContentBlockMemberDocument{Value: doc(true).(*types.ContentBlockMemberDocument).Value}))}, want: citationsWithSchema},
		{name: "a tool result's search result with citations", model: sonnet45, msgs: []types.Message{user(text("hi")), assistant(use("t1")),
			user(result("t1", "", &types.ToolResultContentBlockMemberSearchResult{Value: search}))}, want: citationsWithSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &Request{Operation: recording.OpConverse, ConverseInput: bedrockruntime.ConverseInput{ModelId: aws.String(tt.model), Messages: tt.msgs,
				ToolConfig: weatherTools(), OutputConfig: outputSchema(closed)}}
			assertVerdict(t, Validate(req), tt.want)
		})
	}
}
