package bedrocktest

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/recording"
)

// Blocks for building histories tersely.

func text(s string) types.ContentBlock { return &types.ContentBlockMemberText{Value: s} }

func use(id string) types.ContentBlock {
	return &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
		ToolUseId: aws.String(id), Name: aws.String("get_weather"),
		Input: document.NewLazyDocument(map[string]any{"city": "Paris"}),
	}}
}

func result(id string, status types.ToolResultStatus, content ...types.ToolResultContentBlock) types.ContentBlock {
	if content == nil && status != types.ToolResultStatusError {
		content = []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "ok"}}
	}
	return &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
		ToolUseId: aws.String(id), Status: status, Content: content,
	}}
}

func user(blocks ...types.ContentBlock) types.Message {
	return types.Message{Role: types.ConversationRoleUser, Content: blocks}
}

func assistant(blocks ...types.ContentBlock) types.Message {
	return types.Message{Role: types.ConversationRoleAssistant, Content: blocks}
}

func toolSpec(name string, schema any) types.Tool {
	return &types.ToolMemberToolSpec{Value: types.ToolSpecification{
		Name:        aws.String(name),
		InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)},
	}}
}

func TestValidate(t *testing.T) {
	tools := weatherTools()
	objectSchema := map[string]any{"type": "object"}
	typedUse := &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
		ToolUseId: aws.String("t1"), Name: aws.String("get_weather"),
		Input: document.NewLazyDocument(map[string]any{}), Type: "tool_use",
	}}
	serverUse := &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
		ToolUseId: aws.String("t1"), Name: aws.String("web_search"),
		Input: document.NewLazyDocument(map[string]any{}), Type: types.ToolUseTypeServerToolUse,
	}}
	serverResult := &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
		ToolUseId: aws.String("t1"), Type: aws.String("web_search"),
		Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "results"}},
	}}
	tests := []struct {
		name  string
		model string
		op    string
		msgs  []types.Message
		tools *types.ToolConfiguration
		want  string // "" for valid
	}{
		{name: "valid text", msgs: []types.Message{user(text("hi"))}},
		{name: "valid tool round trip", tools: tools, msgs: []types.Message{
			user(text("hi")), assistant(text("checking"), use("t1"), use("t2")),
			user(result("t2", ""), result("t1", "")), assistant(text("done")), user(text("thanks")),
		}},
		{name: "trailing assistant tool use needs no result yet", tools: tools, msgs: []types.Message{
			user(text("hi")), assistant(use("t1")),
		}},
		{name: "no messages",
			want: "A conversation must start with a user message. Try again with a conversation that starts with a user message."},
		{name: "starts with assistant", msgs: []types.Message{assistant(text("hello"))},
			want: "A conversation must start with a user message. Try again with a conversation that starts with a user message."},
		{name: "two user messages", msgs: []types.Message{user(text("a")), user(text("b"))},
			want: "A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again."},
		{name: "empty content", msgs: []types.Message{user(text("a")), assistant()},
			want: "The content field in the Message object at messages.1 is empty. Add a ContentBlock object to the content field and try again."},
		{name: "blank text", msgs: []types.Message{user(text("a"), text(" \n"))},
			want: "The text field in the ContentBlock object at messages.0.content.1 is blank. Add text to the text field, and try again."},
		{name: "tool blocks without toolConfig", msgs: []types.Message{user(text("a")), assistant(use("t1")), user(result("t1", ""))},
			want: "The toolConfig field must be defined when using toolUse and toolResult content blocks."},
		{name: "missing results", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(use("t1"), use("t2"), use("t3")), user(result("t2", "")),
		}, want: "Expected toolResult blocks at messages.2.content for the following Ids: t1, t3"},
		{name: "text instead of results", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(use("t1")), user(text("what?")),
		}, want: "Expected toolResult blocks at messages.2.content for the following Ids: t1"},
		{name: "too many results", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(use("t1")), user(result("t1", ""), result("t1", "")),
		}, want: "The number of toolResult blocks at messages.2.content exceeds the number of toolUse blocks of previous turn."},
		{name: "result without any use", tools: tools, msgs: []types.Message{user(result("t1", ""))},
			want: "The number of toolResult blocks at messages.0.content exceeds the number of toolUse blocks of previous turn."},
		{name: "result for an unknown id", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(use("t1")), user(result("t9", "")),
		}, want: "The toolUseId t9 of the toolResult block at messages.2.content.0 does not match any toolUse block of previous turn."},
		{name: "error status with empty content", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(use("t1")), user(result("t1", types.ToolResultStatusError)),
		}, want: "The content field at messages.2.content.0.toolResult cannot be empty when status value is error."},
		{name: "blank text in tool result", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(use("t1")), user(result("t1", "", &types.ToolResultContentBlockMemberText{Value: ""})),
		}, want: "The text field in the ToolResultContentBlock object at messages.2.content.0.toolResult.content.0 is blank. Add text to the text field, and try again."},
		{name: "json tool result not an object", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(use("t1")),
			user(result("t1", "", &types.ToolResultContentBlockMemberJson{Value: document.NewLazyDocument([]any{1, 2})})),
		}, want: "The json field in the ToolResultContentBlock object at messages.2.content.0.toolResult.content.0 must be a JSON object."},
		{name: "status on claude 3 is fine", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(use("t1")), user(result("t1", types.ToolResultStatusSuccess)),
		}},
		{name: "status on nova is fine", model: "us.amazon.nova-pro-v1:0", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(use("t1")), user(result("t1", types.ToolResultStatusSuccess)),
		}},
		{name: "status on llama", model: "meta.llama3-1-70b-instruct-v1:0", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(use("t1")), user(result("t1", types.ToolResultStatusError, &types.ToolResultContentBlockMemberText{Value: "failed"})),
		}, want: "This model doesn't support the status field. Remove status and try again."},
		{name: "status on claude v2", model: "anthropic.claude-v2:1", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(use("t1")), user(result("t1", types.ToolResultStatusSuccess)),
		}, want: "This model doesn't support the status field. Remove status and try again."},
		{name: "text beside results on mistral", model: "mistral.mistral-large-2407-v1:0", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(use("t1")), user(result("t1", ""), text("and also")),
		}, want: "Conversation blocks and tool result blocks cannot be provided in the same turn."},
		{name: "text beside results on claude is fine", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(use("t1")), user(result("t1", ""), text("and also")),
		}},
		{name: "tool_use type echoed", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(typedUse), user(result("t1", "")),
		}, want: "1 validation error detected: Value 'tool_use' at 'messages.2.member.content.1.member.toolUse.type' failed to satisfy constraint: Member must satisfy enum value set: [server_tool_use]"},
		{name: "server call and result in the assistant message", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(serverUse, serverResult, text("found it"), use("t2")), user(result("t2", "")),
		}},
		{name: "server call answered by the user", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(serverUse, serverResult), user(result("t1", "")),
		}, want: "The number of toolResult blocks at messages.2.content exceeds the number of toolUse blocks of previous turn."},
		{name: "server result before its call", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(serverResult, serverUse),
		}, want: "The toolUseId t1 of the toolResult block at messages.1.content.0 does not match any server_tool_use toolUse block before it in the message."},
		{name: "client call answered in the assistant message", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(use("t1"), result("t1", "")),
		}, want: "The toolUseId t1 of the toolResult block at messages.1.content.1 does not match any server_tool_use toolUse block before it in the message."},
		{name: "server result beside text on mistral", model: "mistral.mistral-large-2407-v1:0", tools: tools, msgs: []types.Message{
			user(text("a")), assistant(serverUse, serverResult, text("found it")),
		}},
		{name: "system tool without a name", tools: &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberSystemTool{}}},
			msgs: []types.Message{user(text("a"))},
			want: "1 validation error detected: Value null at 'toolConfig.tools.1.member.systemTool.name' failed to satisfy constraint: Member must not be null"},
		{name: "bad tool name", tools: &types.ToolConfiguration{Tools: []types.Tool{
			toolSpec("ok_name", objectSchema), toolSpec("bad name", objectSchema),
		}}, msgs: []types.Message{user(text("a"))},
			want: "1 validation error detected: Value 'bad name' at 'toolConfig.tools.2.member.toolSpec.name' failed to satisfy constraint: Member must satisfy regular expression pattern: ^[a-zA-Z0-9_-]{1,64}$"},
		{name: "duplicate tool name", tools: &types.ToolConfiguration{Tools: []types.Tool{
			toolSpec("t", objectSchema), toolSpec("t", objectSchema),
		}}, msgs: []types.Message{user(text("a"))},
			want: "The toolConfig field contains more than one tool named t. Tool names must be unique."},
		{name: "schema not an object", tools: &types.ToolConfiguration{Tools: []types.Tool{toolSpec("t", "string")}},
			msgs: []types.Message{user(text("a"))},
			want: "The value at toolConfig.tools.0.toolSpec.inputSchema.json must be a JSON object."},
		{name: "no tools", tools: &types.ToolConfiguration{}, msgs: []types.Message{user(text("a"))},
			want: "1 validation error detected: Value '[]' at 'toolConfig.tools' failed to satisfy constraint: Member must have length greater than or equal to 1"},
		{name: "streaming tools on llama", model: "meta.llama3-1-70b-instruct-v1:0", op: recording.OpConverseStream, tools: tools,
			msgs: []types.Message{user(text("a"))},
			want: "This model doesn't support tool use in streaming mode."},
		{name: "streaming tools on claude", op: recording.OpConverseStream, tools: tools, msgs: []types.Message{user(text("a"))}},
		{name: "tools on llama without streaming", model: "meta.llama3-1-70b-instruct-v1:0", tools: tools,
			msgs: []types.Message{user(text("a"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &Request{Operation: recording.OpConverse, ConverseInput: bedrockruntime.ConverseInput{ModelId: aws.String(testModel), Messages: tt.msgs, ToolConfig: tt.tools}}
			if tt.model != "" {
				req.ModelId = aws.String(tt.model)
			}
			if tt.op != "" {
				req.Operation = tt.op
			}
			e := Validate(req)
			if tt.want == "" {
				require.Nil(t, e, "Validate")
				return
			}
			require.NotNil(t, e, "Validate = nil, want %q", tt.want)
			assert.Equal(t, 400, e.Status)
			assert.Equal(t, "ValidationException", e.Type)
			assert.Equal(t, tt.want, e.Message)
		})
	}
}

func TestValidationThroughClient(t *testing.T) {
	srv := NewServer(Script(Text("unreached"), Text("lenient")))
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()

	_, err := client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId:  aws.String(testModel),
		Messages: []types.Message{user(text("a")), user(text("b"))},
	})
	var ve *types.ValidationException
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, ve.ErrorMessage(), "must alternate between user and assistant roles")

	_, err = client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId:    aws.String(testModel),
		Messages:   []types.Message{user(text("a")), assistant(use("t1")), user(text("no results"))},
		ToolConfig: weatherTools(),
	})
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Expected toolResult blocks at messages.2.content for the following Ids: t1", ve.ErrorMessage())

	in := streamInput(user(text("a")))
	in.ModelId = aws.String("us.meta.llama3-2-90b-instruct-v1:0")
	in.ToolConfig = weatherTools()
	_, err = client.ConverseStream(ctx, in)
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "This model doesn't support tool use in streaming mode.", ve.ErrorMessage())

	// Rejected requests are recorded but never reach the handler.
	assert.Len(t, srv.Requests(), 3)
	out, err := client.Converse(ctx, converseInput())
	require.NoError(t, err)
	assert.Equal(t, "unreached", out.Output.(*types.ConverseOutputMemberMessage).Value.Content[0].(*types.ContentBlockMemberText).Value)
}

func TestLenient(t *testing.T) {
	srv := NewServer(Script(Text("anything goes")), func(o *Options) { o.Lenient = true })
	defer srv.Close()
	_, err := srv.Client().Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId:  aws.String(testModel),
		Messages: []types.Message{assistant(text("I speak first"))},
	})
	require.NoError(t, err)
}

// TestValidateSystem: a system text block must not be empty (its length
// constraint, minimum 1).
func TestValidateSystem(t *testing.T) {
	req := &Request{}
	req.Messages = []types.Message{user(text("hi"))}
	req.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "Be brief."}, &types.SystemContentBlockMemberText{Value: ""}}
	e := Validate(req)
	require.NotNil(t, e)
	assert.Equal(t, "1 validation error detected: Value '' at 'system.2.member.text' failed to satisfy constraint: Member must have length greater than or equal to 1", e.Message)
	req.System = req.System[:1]
	assert.Nil(t, Validate(req))
}
