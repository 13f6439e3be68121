// Package message holds the rules about Converse messages that the loop and the
// offline Bedrock share: what a reply echoes back, the text it carries, and
// which of its blocks ask for or answer tools. Each is a pure function of the
// SDK's types.
package message

import (
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/tooluse/bedrock/converse/internal/wire"
)

// Echo prepares an assistant message from a response for the history. A
// client toolUse block keeps only toolUseId, name and input: responses carry
// an undocumented type "tool_use" that Bedrock rejects when echoed back. Its
// input is made wire.Encoded, as every later turn sends it again.
// Blank text blocks, which Bedrock rejects in a request, are dropped.
// Everything else is echoed unchanged, as Bedrock requires, except to a
// model that takes no reasoning back (see models.RejectsReasoningHistory).
// That covers reasoningContent with its signature, redacted reasoning,
// citationsContent, and a server tool's blocks. A server tool's toolUse
// keeps type server_tool_use, and its toolResult in the assistant message
// keeps its type.
func Echo(msg types.Message) types.Message {
	out := types.Message{Role: types.ConversationRoleAssistant, Content: make([]types.ContentBlock, 0, len(msg.Content))}
	for _, b := range msg.Content {
		switch v := b.(type) {
		case *types.ContentBlockMemberToolUse:
			if v.Value.Type != types.ToolUseTypeServerToolUse || v.Value.Input == nil {
				tu := types.ToolUseBlock{ToolUseId: v.Value.ToolUseId, Name: v.Value.Name, Input: wire.Encoded(v.Value.Input)}
				if v.Value.Type == types.ToolUseTypeServerToolUse {
					tu.Type = v.Value.Type
				}
				if tu.Input == nil {
					// The call ran with {}; the SDK requires input.
					tu.Input = wire.Encoded(document.NewLazyDocument(map[string]any{}))
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

// Text joins the generated text of a message: its text blocks and the
// content of its citationsContent blocks, in order.
func Text(msg types.Message) string {
	var sb strings.Builder
	for _, b := range msg.Content {
		if t, ok := BlockText(b); ok {
			sb.WriteString(t)
		}
	}
	return sb.String()
}

// BlockText returns the generated text a block carries: a text block's
// text, or the text of a citationsContent block's content.
func BlockText(b types.ContentBlock) (string, bool) {
	switch v := b.(type) {
	case *types.ContentBlockMemberText:
		return v.Value, true
	case *types.ContentBlockMemberCitationsContent:
		return CitedText(v.Value), true
	}
	return "", false
}

// CitedText joins the generated text of a citationsContent block.
func CitedText(b types.CitationsContentBlock) string {
	var sb strings.Builder
	for _, c := range b.Content {
		if t, ok := c.(*types.CitationGeneratedContentMemberText); ok {
			sb.WriteString(t.Value)
		}
	}
	return sb.String()
}

// HasToolUse reports whether a message asks the client for a tool. Calls of
// server-side system tools do not count: Bedrock ran them, and their
// results are in the same message.
func HasToolUse(msg types.Message) bool {
	for _, b := range msg.Content {
		if ClientCall(b) {
			return true
		}
	}
	return false
}

// ClientCall reports whether b is a toolUse block the client must answer,
// not a server tool's call (type server_tool_use).
func ClientCall(b types.ContentBlock) bool {
	tu, ok := b.(*types.ContentBlockMemberToolUse)
	return ok && tu.Value.Type != types.ToolUseTypeServerToolUse
}

// LoneDocument reports whether msg holds a document block and no text
// block, which Bedrock rejects. The Converse API reference's
// Message.content says: "If you include a ContentBlock with a document
// field in the array, you must also include a ContentBlock with a text
// field".
func LoneDocument(msg types.Message) bool {
	text, doc := false, false
	for _, b := range msg.Content {
		switch b.(type) {
		case *types.ContentBlockMemberText:
			text = true
		case *types.ContentBlockMemberDocument:
			doc = true
		}
	}
	return doc && !text
}

// IsReasoning reports whether b is a reasoningContent block.
func IsReasoning(b types.ContentBlock) bool {
	_, ok := b.(*types.ContentBlockMemberReasoningContent)
	return ok
}

// AnswersTools reports whether msg is a user message holding tool results.
// An assistant message's toolResult is a server tool's, which Bedrock ran
// and answered itself: it answers nothing of the client's.
func AnswersTools(msg types.Message) bool {
	if msg.Role != types.ConversationRoleUser {
		return false
	}
	for _, b := range msg.Content {
		if _, ok := b.(*types.ContentBlockMemberToolResult); ok {
			return true
		}
	}
	return false
}

// HoldsPrompt reports whether msg is a user message with blocks of the
// user's own beside any tool results: a prompt, alone or after the results
// of a stopped task.
func HoldsPrompt(msg types.Message) bool {
	return msg.Role == types.ConversationRoleUser && slices.ContainsFunc(msg.Content, func(b types.ContentBlock) bool {
		_, result := b.(*types.ContentBlockMemberToolResult)
		return !result
	})
}

// HasToolBlocks reports whether any of the messages holds a toolUse or a
// toolResult block, which Bedrock accepts only with a toolConfig.
func HasToolBlocks(messages []types.Message) bool {
	for _, m := range messages {
		for _, b := range m.Content {
			switch b.(type) {
			case *types.ContentBlockMemberToolUse, *types.ContentBlockMemberToolResult:
				return true
			}
		}
	}
	return false
}

// ResultID is the toolUseId of a toolResult block, "" for any other block.
func ResultID(b types.ContentBlock) string {
	if r, ok := b.(*types.ContentBlockMemberToolResult); ok {
		return aws.ToString(r.Value.ToolUseId)
	}
	return ""
}

// Citing reports whether messages hold a document or a search result with
// citations enabled, in a message or a tool result: Anthropic's structured
// outputs are incompatible with citations.
func Citing(messages []types.Message) bool {
	on := func(c *types.CitationsConfig) bool { return c != nil && aws.ToBool(c.Enabled) }
	for _, msg := range messages {
		for _, b := range msg.Content {
			switch v := b.(type) {
			case *types.ContentBlockMemberDocument:
				if on(v.Value.Citations) {
					return true
				}
			case *types.ContentBlockMemberSearchResult:
				if on(v.Value.Citations) {
					return true
				}
			case *types.ContentBlockMemberToolResult:
				for _, rc := range v.Value.Content {
					switch r := rc.(type) {
					case *types.ToolResultContentBlockMemberDocument:
						if on(r.Value.Citations) {
							return true
						}
					case *types.ToolResultContentBlockMemberSearchResult:
						if on(r.Value.Citations) {
							return true
						}
					}
				}
			}
		}
	}
	return false
}

// Same reports whether a and b are the same message of a history, as a
// store that appends a step tells it: a conversation replaces a message it
// changes, never edits it in place.
func Same(a, b types.Message) bool {
	return a.Role == b.Role && len(a.Content) == len(b.Content) && (len(a.Content) == 0 || &a.Content[0] == &b.Content[0])
}
