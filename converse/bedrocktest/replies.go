package bedrocktest

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// Call is one tool call in a ToolUse reply.
type Call struct {
	ID    string // toolUseId, such as "tooluse_1"
	Name  string // the tool's name
	Input any    // the arguments; encoded to JSON (nil means {})
}

// Text returns a reply with one text block and stop reason end_turn.
func Text(text string) *Reply {
	return Output(types.StopReasonEndTurn, &types.ContentBlockMemberText{Value: text})
}

// ToolUse returns a reply asking for tool calls, with stop reason tool_use.
// A non-empty text comes first, as the model's preamble.
//
// Like real Bedrock, the toolUse blocks of a Converse response carry
// "type":"tool_use". Bedrock rejects that field when the block is sent back
// in the history, and so does the Server: a client must drop it.
func ToolUse(text string, calls ...Call) *Reply {
	var blocks []types.ContentBlock
	if text != "" {
		blocks = append(blocks, &types.ContentBlockMemberText{Value: text})
	}
	for _, c := range calls {
		input := c.Input
		if input == nil {
			input = map[string]any{}
		}
		blocks = append(blocks, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
			ToolUseId: aws.String(c.ID),
			Name:      aws.String(c.Name),
			Input:     document.NewLazyDocument(input),
			Type:      toolUseType,
		}})
	}
	return Output(types.StopReasonToolUse, blocks...)
}

// ServerToolUse returns the blocks Bedrock puts in an assistant message for a
// call of a server-side system tool (such as nova_grounding) that it ran
// itself. The toolUse block, of type server_tool_use, comes first. The
// toolResult block follows, holding result as text, with status success and
// the tool's name as its type. Pass them to Output with the rest of the
// reply, usually the answer and stop reason end_turn. A client must send both
// back unchanged and answer neither; the Server checks that it does.
func ServerToolUse(c Call, result string) []types.ContentBlock {
	input := c.Input
	if input == nil {
		input = map[string]any{}
	}
	return []types.ContentBlock{
		&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
			ToolUseId: aws.String(c.ID),
			Name:      aws.String(c.Name),
			Input:     document.NewLazyDocument(input),
			Type:      types.ToolUseTypeServerToolUse,
		}},
		&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
			ToolUseId: aws.String(c.ID),
			Content:   []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: result}},
			Status:    types.ToolResultStatusSuccess,
			Type:      aws.String(c.Name),
		}},
	}
}

// toolUseType is what Bedrock puts in the type field of a client toolUse
// block; the SDK's enum only lists "server_tool_use".
const toolUseType types.ToolUseType = "tool_use"

// Output returns a reply with an assistant message of blocks and stop, with
// made-up usage (10 tokens in, 5 out) and latency.
func Output(stop types.StopReason, blocks ...types.ContentBlock) *Reply {
	return &Reply{Output: &bedrockruntime.ConverseOutput{
		Output: &types.ConverseOutputMemberMessage{Value: types.Message{
			Role:    types.ConversationRoleAssistant,
			Content: blocks,
		}},
		StopReason: stop,
		Usage: &types.TokenUsage{
			InputTokens:  aws.Int32(10),
			OutputTokens: aws.Int32(5),
			TotalTokens:  aws.Int32(15),
		},
		Metrics: &types.ConverseMetrics{LatencyMs: aws.Int64(100)},
	}}
}
