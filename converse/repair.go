package converse

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/message"
)

// repairCalls hands Options.RepairCall each call of reply that would be
// answered as an unknown tool or invalid input. It puts the calls it repairs
// in their place, in calls and in reply's toolUse blocks, so that the history
// shows them as they run. The repaired call is checked again when it runs.
// calls is not changed: the result is a copy if a call was repaired. The
// problems are those exec would answer.
func repairCalls(ctx context.Context, repair func(context.Context, Call, error) (Call, bool), exec *Executor, reply types.Message, calls []toolCall) []toolCall {
	copied := false
	for i, tc := range calls {
		problem := exec.callProblem(tc)
		if problem == nil {
			continue
		}
		fixed, ok := repair(ctx, tc.public(), problem)
		if !ok {
			continue
		}
		if len(fixed.Input) == 0 {
			fixed.Input = []byte("{}")
		}
		if !copied {
			calls, copied = slices.Clone(calls), true
		}
		calls[i] = toolCall{id: tc.id, name: fixed.Tool, input: fixed.Input}
		for k, b := range reply.Content {
			if tu, ok := b.(*types.ContentBlockMemberToolUse); ok && message.ClientCall(b) && aws.ToString(tu.Value.ToolUseId) == tc.id {
				reply.Content[k] = &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: tu.Value.ToolUseId, Name: aws.String(fixed.Tool), Input: inputDocument(fixed.Input)}}
			}
		}
	}
	return calls
}

// callProblem is why the call would be answered with an error before its
// tool runs: its input is unreadable, its tool unknown, or its input not
// what the tool's schema takes; nil if none.
func (e *Executor) callProblem(tc toolCall) error {
	if tc.inputErr != nil {
		return tc.inputErr
	}
	tool, ok := e.lookup(tc.name)
	if !ok {
		return fmt.Errorf("%w %q; available tools: %s", ErrUnknownTool, tc.name, e.available())
	}
	_, err := tool.CheckInput(tc.input)
	return err
}
