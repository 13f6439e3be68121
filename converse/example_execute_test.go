package converse_test

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/tools"
)

// A model turn asking for two calculations is answered with one toolResult
// per toolUse, paired by id.
func ExampleExecutor() {
	reg, _ := tools.NewRegistry(tools.Calculator())
	exec := &converse.Executor{Registry: reg}

	// The content of an assistant message, as Converse returns it.
	content := []types.ContentBlock{
		&types.ContentBlockMemberText{Value: "Let me calculate both."},
		&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
			ToolUseId: aws.String("AB3"), Name: aws.String("calculator"),
			Input: document.NewLazyDocument(map[string]any{"a": 10, "b": 10}),
		}},
		&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
			ToolUseId: aws.String("PO9"), Name: aws.String("calculator"),
			Input: document.NewLazyDocument(map[string]any{"a": 30, "b": 30}),
		}},
		&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
			ToolUseId: aws.String("ZZ1"), Name: aws.String("calculator"),
			Input: document.NewLazyDocument(map[string]any{"a": 1, "b": 0, "operation": "divide"}),
		}},
	}
	for _, block := range exec.Execute(context.Background(), content) {
		r := block.(*types.ContentBlockMemberToolResult).Value
		text := r.Content[0].(*types.ToolResultContentBlockMemberText).Value
		fmt.Println(*r.ToolUseId, r.Status, text)
	}
	// Output:
	// AB3 success 20
	// PO9 success 60
	// ZZ1 error Error: division by zero
}
