package converse

import (
	"encoding/json"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/redact"
)

// The content of a chat span, recorded only with
// Options.Telemetry.RecordContent. It takes the JSON forms the GenAI
// conventions define for gen_ai.input.messages, gen_ai.output.messages and
// gen_ai.system_instructions. These are messages of role and parts. Each part
// is a text, a tool_call, a tool_call_response, a reasoning or, for other
// blocks (images, documents...), just its type.

type contentMessage struct {
	Role         string        `json:"role"`
	Parts        []contentPart `json:"parts"`
	FinishReason string        `json:"finish_reason,omitempty"`
}

type contentPart struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  any             `json:"response,omitempty"`
}

// messagesJSON is the content of msgs; finish, when set, is the stop reason
// of an output message.
func messagesJSON(msgs []types.Message, finish types.StopReason) string {
	out := make([]contentMessage, len(msgs))
	for i, m := range msgs {
		out[i] = contentMessage{Role: string(m.Role), Parts: make([]contentPart, 0, len(m.Content)), FinishReason: finishReason(finish)}
		for _, b := range m.Content {
			out[i].Parts = append(out[i].Parts, partOf(b))
		}
	}
	return marshalContent(out)
}

// systemJSON is the content of a system prompt.
func systemJSON(system []types.SystemContentBlock) string {
	parts := make([]contentPart, 0, len(system))
	for _, b := range system {
		if t, ok := b.(*types.SystemContentBlockMemberText); ok {
			parts = append(parts, contentPart{Type: "text", Content: t.Value})
		}
	}
	return marshalContent(parts)
}

func partOf(b types.ContentBlock) contentPart {
	if text, ok := message.BlockText(b); ok {
		return contentPart{Type: "text", Content: text}
	}
	switch v := b.(type) {
	case *types.ContentBlockMemberToolUse:
		args, _ := documentJSON(v.Value.Input)
		return contentPart{Type: "tool_call", ID: aws.ToString(v.Value.ToolUseId), Name: aws.ToString(v.Value.Name), Arguments: args}
	case *types.ContentBlockMemberToolResult:
		var response []any
		for _, c := range v.Value.Content {
			switch c := c.(type) {
			case *types.ToolResultContentBlockMemberText:
				response = append(response, c.Value)
			case *types.ToolResultContentBlockMemberJson:
				raw, _ := documentJSON(c.Value)
				response = append(response, raw)
			}
		}
		return contentPart{Type: "tool_call_response", ID: aws.ToString(v.Value.ToolUseId), Response: response}
	case *types.ContentBlockMemberReasoningContent:
		if r, ok := v.Value.(*types.ReasoningContentBlockMemberReasoningText); ok {
			return contentPart{Type: "reasoning", Content: aws.ToString(r.Value.Text)}
		}
		return contentPart{Type: "reasoning"}
	case *types.ContentBlockMemberImage:
		return contentPart{Type: "image"}
	case *types.ContentBlockMemberDocument:
		return contentPart{Type: "document"}
	}
	return contentPart{Type: "other"}
}

// finishReason maps Bedrock's stop reasons to the conventions' finish
// reasons; others are kept as Bedrock sent them.
func finishReason(stop types.StopReason) string {
	switch stop {
	case types.StopReasonEndTurn, types.StopReasonStopSequence:
		return "stop"
	case types.StopReasonMaxTokens:
		return "length"
	case types.StopReasonToolUse:
		return "tool_call"
	case types.StopReasonContentFiltered, types.StopReasonGuardrailIntervened:
		return "content_filter"
	}
	return string(stop)
}

// marshalContent encodes content, redacted as recordings are (a tool's
// result can hold an AWS error body); what cannot be encoded is recorded as
// an empty list rather than failing the call.
func marshalContent(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "[]"
	}
	return redact.String(string(b))
}
