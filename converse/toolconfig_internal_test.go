package converse

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCoverHistory: a request without tools whose history calls some gets
// a toolConfig describing them, each once, as withdrawn; a request with
// tools keeps its own configuration, the very one (shared by every turn).
func TestCoverHistory(t *testing.T) {
	calls := func(names ...string) []types.Message {
		msg := types.Message{Role: types.ConversationRoleAssistant}
		for _, n := range names {
			msg.Content = append(msg.Content, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{Name: aws.String(n), ToolUseId: aws.String(n)}})
		}
		return []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "hi"}}}, msg}
	}
	offered := &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{Name: aws.String("calc")}}}}
	for _, tc := range []struct {
		name    string
		cfg     *types.ToolConfiguration
		history []types.Message
		want    []string // the withdrawn tools; nil: cfg itself
	}{
		{"no tool blocks", nil, calls(), nil},
		{"offered", offered, calls("final_answer", "calc"), nil},
		{"none offered", nil, calls("final_answer", "calc", "final_answer"), []string{"final_answer", "calc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := coverHistory(tc.cfg, tc.history)
			if tc.want == nil {
				assert.Same(t, tc.cfg, got)
				return
			}
			require.NotNil(t, got)
			assert.Nil(t, got.ToolChoice)
			var names []string
			for _, tool := range got.Tools {
				spec := tool.(*types.ToolMemberToolSpec).Value
				names = append(names, aws.ToString(spec.Name))
				assert.Equal(t, withdrawnDescription, aws.ToString(spec.Description))
			}
			assert.Equal(t, tc.want, names)
		})
	}
}
