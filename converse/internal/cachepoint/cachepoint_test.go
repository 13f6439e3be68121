package cachepoint

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"

	"github.com/tooluse/bedrock/converse/internal/models"
)

var (
	tool      = &types.ToolMemberToolSpec{Value: types.ToolSpecification{Name: aws.String("lookup")}}
	toolPoint = &types.ToolMemberCachePoint{Value: cp("")}
	sys       = &types.SystemContentBlockMemberText{Value: "Be brief."}
	sysPoint  = &types.SystemContentBlockMemberCachePoint{Value: cp(types.CacheTTLOneHour)}
	hi        = &types.ContentBlockMemberText{Value: "hi"}
	msgPoint  = &types.ContentBlockMemberCachePoint{Value: cp(types.CacheTTLFiveMinutes)}
	doc       = &types.ContentBlockMemberDocument{Value: types.DocumentBlock{Name: aws.String("report")}}
	video     = &types.ContentBlockMemberVideo{}
	result    = &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String("t1")}}
)

func user(blocks ...types.ContentBlock) types.Message {
	return types.Message{Role: types.ConversationRoleUser, Content: blocks}
}

func TestList(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *bedrockruntime.ConverseInput
		want []Point
	}{
		{"none", &bedrockruntime.ConverseInput{Messages: []types.Message{user(hi)}}, nil},
		{"in Bedrock's order", &bedrockruntime.ConverseInput{
			Messages:   []types.Message{user(hi), user(hi, msgPoint)},
			System:     []types.SystemContentBlock{sys, sysPoint},
			ToolConfig: &types.ToolConfiguration{Tools: []types.Tool{tool, toolPoint}},
		}, []Point{
			{Field: Tools, Index: 1},
			{Field: System, Index: 1, TTL: types.CacheTTLOneHour},
			{Field: Messages, Msg: 1, Index: 1, TTL: types.CacheTTLFiveMinutes},
		}},
		{"a tool config without points", &bedrockruntime.ConverseInput{ToolConfig: &types.ToolConfiguration{Tools: []types.Tool{tool}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, List(tc.in))
		})
	}
}

func TestRank(t *testing.T) {
	for _, tc := range []struct {
		ttl  types.CacheTTL
		want int
	}{
		{"", 0},
		{types.CacheTTLFiveMinutes, 0},
		{types.CacheTTLOneHour, 1},
	} {
		assert.Equal(t, tc.want, Rank(tc.ttl), "Rank(%q)", tc.ttl)
	}
}

func TestFollows(t *testing.T) {
	takes := models.Cache{Messages: true, AfterToolResult: true}
	refuses := models.Cache{Messages: true}
	for _, tc := range []struct {
		name  string
		rules models.Cache
		b     types.ContentBlock
		want  Refusal
	}{
		{"text", refuses, hi, Allowed},
		{"a document", takes, doc, AfterMedia},
		{"a video", takes, video, AfterMedia},
		{"a point", takes, msgPoint, AfterPoint},
		{"a tool result, taken", takes, result, Allowed},
		{"a tool result, refused", refuses, result, AfterToolResult},
		{"reasoning", takes, &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{Value: []byte("x")}}, AfterReasoning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Follows(tc.rules, tc.b))
		})
	}
}

func TestPrefix(t *testing.T) {
	in := &bedrockruntime.ConverseInput{
		ModelId:    aws.String("m"),
		Messages:   []types.Message{user(hi, msgPoint), user(hi, msgPoint, hi)},
		System:     []types.SystemContentBlock{sys, sysPoint},
		ToolConfig: &types.ToolConfiguration{Tools: []types.Tool{tool, toolPoint}, ToolChoice: &types.ToolChoiceMemberAny{}},
	}
	tools := &types.ToolConfiguration{Tools: []types.Tool{tool}}
	for _, tc := range []struct {
		name string
		upTo *Point
		want *bedrockruntime.ConverseInput
	}{
		{"all of it, no points", nil, &bedrockruntime.ConverseInput{
			ToolConfig: tools, System: []types.SystemContentBlock{sys},
			Messages: []types.Message{user(hi), user(hi, hi)},
		}},
		{"through the tools", &Point{Field: Tools, Index: 1}, &bedrockruntime.ConverseInput{ToolConfig: tools}},
		{"through the system prompt", &Point{Field: System, Index: 1}, &bedrockruntime.ConverseInput{
			ToolConfig: tools, System: []types.SystemContentBlock{sys},
		}},
		{"through a message", &Point{Field: Messages, Msg: 1, Index: 1}, &bedrockruntime.ConverseInput{
			ToolConfig: tools, System: []types.SystemContentBlock{sys},
			Messages: []types.Message{user(hi), user(hi)},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Prefix(in, tc.upTo))
		})
	}
	assert.Len(t, in.Messages[0].Content, 2, "in is left as it was")
}
