package message

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/tooluse/bedrock/converse/internal/wire"
)

func text(s string) types.ContentBlock { return &types.ContentBlockMemberText{Value: s} }

func toolUse(id string, typ types.ToolUseType, input document.Interface) types.ContentBlock {
	return &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
		ToolUseId: aws.String(id), Name: aws.String("add"), Type: typ, Input: input,
	}}
}

func toolResult(id string) types.ContentBlock {
	return &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
		ToolUseId: aws.String(id), Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "3"}},
	}}
}

func cited(parts ...string) types.ContentBlock {
	var c types.CitationsContentBlock
	for _, p := range parts {
		c.Content = append(c.Content, &types.CitationGeneratedContentMemberText{Value: p})
	}
	return &types.ContentBlockMemberCitationsContent{Value: c}
}

var (
	reasoning = &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{
		Value: types.ReasoningTextBlock{Text: aws.String("think"), Signature: aws.String("sig")},
	}}
	input = document.NewLazyDocument(map[string]any{"a": 1})
	empty = document.NewLazyDocument(map[string]any{})
)

func assistant(blocks ...types.ContentBlock) types.Message {
	return types.Message{Role: types.ConversationRoleAssistant, Content: blocks}
}

func user(blocks ...types.ContentBlock) types.Message {
	return types.Message{Role: types.ConversationRoleUser, Content: blocks}
}

func TestEcho(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want types.Message
	}{
		{"client call loses its type", assistant(toolUse("t1", "tool_use", input)), assistant(toolUse("t1", "", wire.Encoded(input)))},
		{"client call without input gets {}", assistant(toolUse("t1", "", nil)), assistant(toolUse("t1", "", wire.Encoded(empty)))},
		{"server call kept as it is", assistant(toolUse("s1", types.ToolUseTypeServerToolUse, input)),
			assistant(toolUse("s1", types.ToolUseTypeServerToolUse, input))},
		{"server call without input keeps its type", assistant(toolUse("s1", types.ToolUseTypeServerToolUse, nil)),
			assistant(toolUse("s1", types.ToolUseTypeServerToolUse, wire.Encoded(empty)))},
		{"blank text dropped", assistant(text(" \n"), text("hi")), assistant(text("hi"))},
		{"reasoning and citations echoed", assistant(reasoning, cited("a")), assistant(reasoning, cited("a"))},
		{"the role is the assistant's", types.Message{Content: []types.ContentBlock{text("hi")}}, assistant(text("hi"))},
		{"nothing left", assistant(text("")), types.Message{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Echo(tc.in))
		})
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   types.Message
		want string
	}{
		{"none", assistant(), ""},
		{"text blocks joined", assistant(text("a"), text("b")), "ab"},
		{"citations content in order", assistant(text("a"), cited("b", "c"), text("d")), "abcd"},
		{"other blocks skipped", assistant(reasoning, toolUse("t1", "", input), text("x")), "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Text(tc.in))
		})
	}
}

func TestBlockText(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   types.ContentBlock
		want string
		ok   bool
	}{
		{"text", text("hi"), "hi", true},
		{"empty text", text(""), "", true},
		{"citations", cited("a", "b"), "ab", true},
		{"reasoning", reasoning, "", false},
		{"toolUse", toolUse("t1", "", input), "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := BlockText(tc.in)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.ok, ok)
		})
	}
}

func TestCitedText(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   types.CitationsContentBlock
		want string
	}{
		{"none", types.CitationsContentBlock{}, ""},
		{"parts joined", cited("a", "b").(*types.ContentBlockMemberCitationsContent).Value, "ab"},
		{"unknown parts skipped", types.CitationsContentBlock{Content: []types.CitationGeneratedContent{
			&types.UnknownUnionMember{Tag: "future"}, &types.CitationGeneratedContentMemberText{Value: "x"},
		}}, "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, CitedText(tc.in))
		})
	}
}

func TestClientCallAndHasToolUse(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   types.ContentBlock
		want bool
	}{
		{"client call", toolUse("t1", "", input), true},
		{"client call with the response's type", toolUse("t1", "tool_use", input), true},
		{"server call", toolUse("s1", types.ToolUseTypeServerToolUse, input), false},
		{"text", text("hi"), false},
		{"result", toolResult("t1"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ClientCall(tc.in))
			assert.Equal(t, tc.want, HasToolUse(assistant(text("x"), tc.in)))
		})
	}
	assert.False(t, HasToolUse(assistant()))
}

func TestAnswersTools(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   types.Message
		want bool
	}{
		{"results", user(toolResult("t1"), toolResult("t2")), true},
		{"a result among text", user(text("and"), toolResult("t1")), true},
		{"text only", user(text("hi")), false},
		{"a call is no answer", assistant(toolUse("t1", "", input)), false},
		{"a server tool's result is the model's", assistant(toolUse("s1", types.ToolUseTypeServerToolUse, input), toolResult("s1")), false},
		{"empty", user(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, AnswersTools(tc.in))
		})
	}
}

func TestHasToolBlocks(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []types.Message
		want bool
	}{
		{"none", nil, false},
		{"text only", []types.Message{user(text("hi")), assistant(text("yo"))}, false},
		{"a call", []types.Message{user(text("hi")), assistant(toolUse("t1", "", input))}, true},
		{"a server call", []types.Message{assistant(toolUse("s1", types.ToolUseTypeServerToolUse, input))}, true},
		{"a result", []types.Message{user(toolResult("t1"))}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, HasToolBlocks(tc.in))
		})
	}
}

func TestResultID(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   types.ContentBlock
		want string
	}{
		{"result", toolResult("t1"), "t1"},
		{"result without id", &types.ContentBlockMemberToolResult{}, ""},
		{"call", toolUse("t1", "", input), ""},
		{"text", text("t1"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ResultID(tc.in))
		})
	}
}

func TestLoneDocument(t *testing.T) {
	pdf := &types.ContentBlockMemberDocument{Value: types.DocumentBlock{Format: types.DocumentFormatPdf, Name: aws.String("report")}}
	for _, tc := range []struct {
		name string
		in   types.Message
		want bool
	}{
		{"a document alone", user(pdf), true},
		{"a document and text", user(pdf, text("summarize")), false},
		{"text alone", user(text("hi")), false},
		{"a tool result alone", user(toolResult("t1")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, LoneDocument(tc.in))
		})
	}
}

func TestCiting(t *testing.T) {
	on := &types.CitationsConfig{Enabled: aws.Bool(true)}
	off := &types.CitationsConfig{Enabled: aws.Bool(false)}
	user := func(blocks ...types.ContentBlock) []types.Message {
		return []types.Message{{Role: types.ConversationRoleUser, Content: blocks}}
	}
	result := func(c types.ToolResultContentBlock) types.ContentBlock {
		return &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String("t"), Content: []types.ToolResultContentBlock{c}}}
	}
	for _, tc := range []struct {
		name string
		msgs []types.Message
		want bool
	}{
		{"none", user(&types.ContentBlockMemberText{Value: "hi"}), false},
		{"a document citing", user(&types.ContentBlockMemberDocument{Value: types.DocumentBlock{Citations: on}}), true},
		{"a document not citing", user(&types.ContentBlockMemberDocument{Value: types.DocumentBlock{Citations: off}}), false},
		{"a search result citing", user(&types.ContentBlockMemberSearchResult{Value: types.SearchResultBlock{Citations: on}}), true},
		{"a tool's document citing", user(result(&types.ToolResultContentBlockMemberDocument{Value: types.DocumentBlock{Citations: on}})), true},
		{"a tool's search result citing", user(result(&types.ToolResultContentBlockMemberSearchResult{Value: types.SearchResultBlock{Citations: on}})), true},
		{"a tool's document without a config", user(result(&types.ToolResultContentBlockMemberDocument{Value: types.DocumentBlock{}})), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Citing(tc.msgs))
		})
	}
}
