package converse_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
)

func TestMarshalMessages(t *testing.T) {
	history := []types.Message{
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{text("10+10?")}},
		{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{text("Adding."), toolUse("AB3", "calculator", map[string]any{"a": 10, "b": 10})}},
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
			ToolUseId: aws.String("AB3"), Status: types.ToolResultStatusSuccess,
			Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "20"}},
		}}}},
	}
	b, err := converse.MarshalMessages(history)
	require.NoError(t, err)
	assert.JSONEq(t, `[
		{"role":"user","content":[{"text":"10+10?"}]},
		{"role":"assistant","content":[{"text":"Adding."},{"toolUse":{"toolUseId":"AB3","name":"calculator","input":{"a":10,"b":10}}}]},
		{"role":"user","content":[{"toolResult":{"toolUseId":"AB3","status":"success","content":[{"text":"20"}]}}]}
	]`, string(b))
}

// TestUnmarshalMessages: what MarshalMessages writes reads back as the same
// messages, and a block of a kind the SDK does not know, or what is not an
// array, is an error.
func TestUnmarshalMessages(t *testing.T) {
	history := []types.Message{
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{text("10+10?")}},
		{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{toolUse("AB3", "calculator", map[string]any{"a": 10, "b": 10})}},
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
			ToolUseId: aws.String("AB3"), Status: types.ToolResultStatusError,
			Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "Error: no"}},
		}}}},
	}
	b, err := converse.MarshalMessages(history)
	require.NoError(t, err)
	got, err := converse.UnmarshalMessages(b)
	require.NoError(t, err)
	again, err := converse.MarshalMessages(got)
	require.NoError(t, err)
	assert.JSONEq(t, string(b), string(again))
	assert.Equal(t, "AB3", aws.ToString(got[2].Content[0].(*types.ContentBlockMemberToolResult).Value.ToolUseId))

	for _, bad := range []string{`{"role":"user"}`, `[{"role":"user","content":[{"hologram":{}}]}]`} {
		_, err := converse.UnmarshalMessages([]byte(bad))
		assert.ErrorContains(t, err, "converse: ", bad)
	}
}
