package converse

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
)

func TestOverflowed(t *testing.T) {
	ve := func(msg string) error {
		return fmt.Errorf("turn 2: %w", &types.ValidationException{Message: aws.String(msg)})
	}
	for _, tt := range []struct {
		err  error
		stop types.StopReason
		want bool
	}{
		{err: ve("Input is too long for requested model."), want: true},
		{err: ve("The model returned the following errors: prompt is too long: 210000 tokens > 200000 maximum"), want: true},
		{err: ve("The model returned the following errors: input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000"), want: true},
		{err: ve("Mantle streaming error for requestId 0b1c: This model's maximum context length is 202752 tokens. However, you requested 65536 output tokens and your prompt contains at least 137217 input tokens, for a total of at least 202753 tokens."), want: true},
		{err: ve("This model's maximum context length is 1048576 tokens. However, your messages resulted in 1100000 tokens."), want: true},
		{err: ve("The model returned the following errors: too many total text bytes: 9000000 > 8388608"), want: true},
		{err: ve("The maximum tokens you requested exceeds the model limit of 2048. Try again with a maximum tokens value that is lower than 2048."), want: false},
		{err: ve("messages.0.content: too long"), want: false},
		{err: &types.ThrottlingException{Message: aws.String("Input is too long for requested model.")}, want: false},
		{stop: types.StopReasonModelContextWindowExceeded, want: true},
		{stop: types.StopReasonEndTurn, want: false},
	} {
		assert.Equal(t, tt.want, overflowed(tt.err, &turnResult{stop: tt.stop}), "%v %s", tt.err, tt.stop)
	}
}

func TestSendPrompt(t *testing.T) {
	msg := func(role types.ConversationRole, blocks ...types.ContentBlock) types.Message {
		return types.Message{Role: role, Content: blocks}
	}
	user := func(s string) types.Message {
		return msg(types.ConversationRoleUser, &types.ContentBlockMemberText{Value: s})
	}
	reply := msg(types.ConversationRoleAssistant, &types.ContentBlockMemberText{Value: "a"})
	call := msg(types.ConversationRoleAssistant, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("t1"), Name: aws.String("f")}})
	results := msg(types.ConversationRoleUser, &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String("t1")}})
	sh := &shape{}
	correction := user(sh.correction("property \"n\" is missing"))
	for _, tt := range []struct {
		name    string
		history []types.Message
		want    int
	}{
		{"a new prompt", []types.Message{user("p1"), reply, user("p2")}, 2},
		{"a tool loop", []types.Message{user("p1"), reply, user("p2"), call, results}, 2},
		{"a correction", []types.Message{user("p1"), reply, user("p2"), reply, correction}, 2},
		{"a native correction", []types.Message{user("p1"), reply, user((&shape{native: true}).correction("not JSON"))}, 0},
		{"a tool loop after corrections", []types.Message{user("p1"), reply, correction, reply, correction, call, results}, 0},
		{"only the first", []types.Message{user("p1")}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, sendPrompt(tt.history))
		})
	}
}
