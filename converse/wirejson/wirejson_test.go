package wirejson_test

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/wirejson"
)

// history is a tool exchange: a question, a call, its result.
var history = []types.Message{
	{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "10+10?"}}},
	{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{
		&types.ContentBlockMemberText{Value: "Adding."},
		&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
			ToolUseId: aws.String("AB3"), Name: aws.String("calculator"),
			Input: document.NewLazyDocument(map[string]any{"a": 10, "b": 10}),
		}},
	}},
	{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
		ToolUseId: aws.String("AB3"), Status: types.ToolResultStatusSuccess,
		Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "20"}},
	}}}},
}

func ExampleMarshalMessages() {
	b, err := wirejson.MarshalMessages(history[:2])
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
	// Output:
	// [{"content":[{"text":"10+10?"}],"role":"user"},{"content":[{"text":"Adding."},{"toolUse":{"input":{"a":10,"b":10},"name":"calculator","toolUseId":"AB3"}}],"role":"assistant"}]
}

// TestUnmarshalMessages: what MarshalMessages writes reads back as the same
// messages, and a block of a kind the SDK does not know, or what is not an
// array, is an error.
func TestUnmarshalMessages(t *testing.T) {
	b, err := wirejson.MarshalMessages(history)
	require.NoError(t, err)
	got, err := wirejson.UnmarshalMessages(b)
	require.NoError(t, err)
	again, err := wirejson.MarshalMessages(got)
	require.NoError(t, err)
	assert.JSONEq(t, string(b), string(again))
	assert.Equal(t, "AB3", aws.ToString(got[2].Content[0].(*types.ContentBlockMemberToolResult).Value.ToolUseId))

	for _, bad := range []string{`{"role":"user"}`, `[{"role":"user","content":[{"hologram":{}}]}]`} {
		_, err := wirejson.UnmarshalMessages([]byte(bad))
		assert.ErrorContains(t, err, "wirejson: ", bad)
	}
}

// TestRequestAndResponse: a request's body leaves out the model ID; a
// request and a response read back as they were written.
func TestRequestAndResponse(t *testing.T) {
	in := &bedrockruntime.ConverseInput{ModelId: aws.String("m"), Messages: history,
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(100)}}
	body, err := wirejson.MarshalRequest(in)
	require.NoError(t, err)
	assert.NotContains(t, string(body), `"m"`)
	read, err := wirejson.UnmarshalRequest(body)
	require.NoError(t, err)
	assert.Nil(t, read.ModelId)
	again, err := wirejson.MarshalRequest(read)
	require.NoError(t, err)
	assert.JSONEq(t, string(body), string(again))

	out := &bedrockruntime.ConverseOutput{
		Output:     &types.ConverseOutputMemberMessage{Value: history[1]},
		StopReason: types.StopReasonToolUse,
		Usage:      &types.TokenUsage{InputTokens: aws.Int32(3), OutputTokens: aws.Int32(4), TotalTokens: aws.Int32(7)},
	}
	body, err = wirejson.MarshalResponse(out)
	require.NoError(t, err)
	got, err := wirejson.UnmarshalResponse(body)
	require.NoError(t, err)
	assert.Equal(t, types.StopReasonToolUse, got.StopReason)
	assert.Equal(t, int32(7), aws.ToInt32(got.Usage.TotalTokens))
	again, err = wirejson.MarshalResponse(got)
	require.NoError(t, err)
	assert.JSONEq(t, string(body), string(again))

	_, err = wirejson.UnmarshalResponse([]byte(`{"output":`))
	assert.ErrorContains(t, err, "wirejson: ")
}
