package converse

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// echo prepares an assistant message from a response for the history. A
// toolUse block keeps only toolUseId, name and input: responses carry an
// undocumented type "tool_use" that Bedrock rejects when echoed back (type is
// kept for server_tool_use). Blank text blocks, which Bedrock rejects in a
// request, are dropped. Everything else, reasoningContent with its signature
// included, is echoed unchanged.
func echo(msg types.Message) types.Message {
	out := types.Message{Role: types.ConversationRoleAssistant, Content: make([]types.ContentBlock, 0, len(msg.Content))}
	for _, b := range msg.Content {
		switch v := b.(type) {
		case *types.ContentBlockMemberToolUse:
			if v.Value.Type != types.ToolUseTypeServerToolUse || v.Value.Input == nil {
				tu := types.ToolUseBlock{ToolUseId: v.Value.ToolUseId, Name: v.Value.Name, Input: v.Value.Input}
				if v.Value.Type == types.ToolUseTypeServerToolUse {
					tu.Type = v.Value.Type
				}
				if tu.Input == nil {
					// The call ran with {}; the SDK requires input.
					tu.Input = document.NewLazyDocument(map[string]any{})
				}
				b = &types.ContentBlockMemberToolUse{Value: tu}
			}
		case *types.ContentBlockMemberText:
			if strings.TrimSpace(v.Value) == "" {
				continue
			}
		}
		out.Content = append(out.Content, b)
	}
	return out
}

// textOf joins the text blocks of a message.
func textOf(msg types.Message) string {
	var parts []string
	for _, b := range msg.Content {
		if t, ok := b.(*types.ContentBlockMemberText); ok {
			parts = append(parts, t.Value)
		}
	}
	return strings.Join(parts, "")
}

// hasToolUse reports whether a message asks for a tool.
func hasToolUse(msg types.Message) bool {
	for _, b := range msg.Content {
		if _, ok := b.(*types.ContentBlockMemberToolUse); ok {
			return true
		}
	}
	return false
}

// Usage counts tokens, summed over the turns of a conversation.
type Usage struct {
	InputTokens           int
	OutputTokens          int
	TotalTokens           int
	CacheReadInputTokens  int
	CacheWriteInputTokens int
}

// usageOf converts the SDK's usage, whose fields may be absent.
func usageOf(u *types.TokenUsage) Usage {
	if u == nil {
		return Usage{}
	}
	return Usage{
		InputTokens:           int(aws.ToInt32(u.InputTokens)),
		OutputTokens:          int(aws.ToInt32(u.OutputTokens)),
		TotalTokens:           int(aws.ToInt32(u.TotalTokens)),
		CacheReadInputTokens:  int(aws.ToInt32(u.CacheReadInputTokens)),
		CacheWriteInputTokens: int(aws.ToInt32(u.CacheWriteInputTokens)),
	}
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:           u.InputTokens + v.InputTokens,
		OutputTokens:          u.OutputTokens + v.OutputTokens,
		TotalTokens:           u.TotalTokens + v.TotalTokens,
		CacheReadInputTokens:  u.CacheReadInputTokens + v.CacheReadInputTokens,
		CacheWriteInputTokens: u.CacheWriteInputTokens + v.CacheWriteInputTokens,
	}
}
