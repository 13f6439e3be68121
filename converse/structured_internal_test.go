package converse

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"

	"github.com/tooluse/bedrock/converse/internal/models"
)

// TestShapePath: the policy a structured Send consults for each request,
// from the model it goes to and what the request holds.
func TestShapePath(t *testing.T) {
	cited := types.DocumentBlock{Format: types.DocumentFormatTxt, Name: aws.String("report"),
		Source: &types.DocumentSourceMemberBytes{Value: []byte("x")}, Citations: &types.CitationsConfig{Enabled: aws.Bool(true)}}
	search := types.SearchResultBlock{Citations: &types.CitationsConfig{Enabled: aws.Bool(true)}}
	prompt := types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "hi"}}}
	inResult := func(c types.ToolResultContentBlock) []types.Message {
		return []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberToolResult{
			Value: types.ToolResultBlock{ToolUseId: aws.String("t1"), Content: []types.ToolResultContentBlock{c}}}}}}
	}
	const (
		sonnet45 = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
		nova     = "us.amazon.nova-pro-v1:0"
		llama    = "us.meta.llama3-3-70b-instruct-v1:0"
	)
	sh := &shape{schema: `{"type":"object","additionalProperties":false}`}
	tests := []struct {
		name          string
		sh            *shape
		model         string
		thinks        bool
		msgs          []types.Message
		native, force bool
	}{
		{"native", sh, sonnet45, false, []types.Message{prompt}, true, false},
		{"native with thinking", sh, sonnet45, true, []types.Message{prompt}, true, false},
		{"a schema that cannot be closed", &shape{}, sonnet45, false, []types.Message{prompt}, false, true},
		{"a cited document", sh, sonnet45, false, []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberDocument{Value: cited}}}}, false, true},
		{"a cited search result", sh, sonnet45, false, []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberSearchResult{Value: search}}}}, false, true},
		{"a tool result's cited document", sh, sonnet45, false, inResult(&types.ToolResultContentBlockMemberDocument{Value: cited}), false, true},
		{"a tool result's cited search result", sh, sonnet45, false, inResult(&types.ToolResultContentBlockMemberSearchResult{Value: search}), false, true},
		{"a cited document with thinking", sh, sonnet45, true, []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberDocument{Value: cited}}}}, false, false},
		{"forced", sh, nova, false, []types.Message{prompt}, false, true},
		{"thinking forbids forcing", sh, nova, true, []types.Message{prompt}, false, false},
		{"no toolChoice any", sh, llama, false, []types.Message{prompt}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			native, force := tt.sh.path(models.Parse(tt.model), tt.thinks, tt.msgs)
			assert.Equal(t, [2]bool{tt.native, tt.force}, [2]bool{native, force}, "native, force")
		})
	}
}
