package evaltest_test

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// calculatorModel is a stand-in for a model: it asks for the calculator,
// then answers with its result, or says it failed after an error result.
var calculatorModel = bedrocktest.HandlerFunc(func(_ context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
	last := req.Messages[len(req.Messages)-1]
	for _, b := range last.Content {
		if r, ok := b.(*types.ContentBlockMemberToolResult); ok {
			if t, ok := r.Value.Content[0].(*types.ToolResultContentBlockMemberText); ok && len(t.Value) > 6 && t.Value[:6] == "Error:" {
				return bedrocktest.Text("Sorry, the calculator failed."), nil
			}
			return bedrocktest.Text("6 times 7 is 42."), nil
		}
	}
	return bedrocktest.ToolUse("", bedrocktest.Call{ID: "call-" + string(rune('a'+len(req.Messages)/2)), Name: "calculator",
		Input: map[string]any{"a": 6, "b": 7, "operation": "multiply"}}), nil
})

// agent returns a Runner.Agent of conversations with srv's model and the
// built-in tools, with optFns.
func agent(srv *bedrocktest.Server, optFns ...func(*converse.Options)) func(context.Context) (*converse.Conversation, error) {
	return func(context.Context) (*converse.Conversation, error) {
		reg, err := tools.NewRegistry(tools.Builtins()...)
		if err != nil {
			return nil, err
		}
		return converse.New(srv.Client(), model, reg, optFns...), nil
	}
}
