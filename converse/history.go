package converse

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// echo prepares an assistant message from a response for the history. A
// client toolUse block keeps only toolUseId, name and input: responses carry
// an undocumented type "tool_use" that Bedrock rejects when echoed back.
// Blank text blocks, which Bedrock rejects in a request, are dropped.
// Everything else is echoed unchanged, as Bedrock requires: reasoningContent
// with its signature, redacted reasoning, citationsContent, and a server
// tool's blocks (its toolUse keeping type server_tool_use, its toolResult in
// the assistant message keeping its type).
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

// textOf joins the generated text of a message: its text blocks and the
// content of its citationsContent blocks, in order.
func textOf(msg types.Message) string {
	var sb strings.Builder
	for _, b := range msg.Content {
		if t, ok := blockText(b); ok {
			sb.WriteString(t)
		}
	}
	return sb.String()
}

// hasToolUse reports whether a message asks the client for a tool. Calls of
// server-side system tools do not count: Bedrock ran them, and their
// results are in the same message.
func hasToolUse(msg types.Message) bool {
	for _, b := range msg.Content {
		if clientCall(b) {
			return true
		}
	}
	return false
}

// clientCall reports whether b is a toolUse block the client must answer,
// not a server tool's call (type server_tool_use).
func clientCall(b types.ContentBlock) bool {
	tu, ok := b.(*types.ContentBlockMemberToolUse)
	return ok && tu.Value.Type != types.ToolUseTypeServerToolUse
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
