package trim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/wire"
	"github.com/tooluse/bedrock/converse/recording"
)

// randomHistory is a tool-heavy conversation: prompts, tool rounds of one
// to three calls with results of every size (text and JSON, some failed),
// final answers; it ends with a user message, as a request does.
func randomHistory(r *rand.Rand) []types.Message {
	txt := func(s string) types.ContentBlock { return &types.ContentBlockMemberText{Value: s} }
	user := func(b ...types.ContentBlock) types.Message {
		return types.Message{Role: types.ConversationRoleUser, Content: b}
	}
	assistant := func(b ...types.ContentBlock) types.Message {
		return types.Message{Role: types.ConversationRoleAssistant, Content: b}
	}
	history := []types.Message{user(txt("first prompt"))}
	id := 0
	for round := r.IntN(25); round > 0; round-- {
		if r.IntN(4) == 0 {
			history = append(history, assistant(txt("an answer")), user(txt(fmt.Sprint("prompt ", round))))
			continue
		}
		var uses, results []types.ContentBlock
		if r.IntN(2) == 0 {
			uses = append(uses, txt("let me look"))
		}
		for range 1 + r.IntN(3) {
			id++
			tid := fmt.Sprint("tooluse_", id)
			uses = append(uses, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
				ToolUseId: aws.String(tid), Name: aws.String("lookup"), Input: document.NewLazyDocument(map[string]any{"q": id}),
			}})
			size := []int{10, 300, 3000, 12000}[r.IntN(4)]
			var content types.ToolResultContentBlock = &types.ToolResultContentBlockMemberText{Value: strings.Repeat("é", size/2)}
			if r.IntN(3) == 0 {
				content = &types.ToolResultContentBlockMemberJson{Value: document.NewLazyDocument(map[string]any{"data": strings.Repeat("x", size)})}
			}
			status := types.ToolResultStatusSuccess
			if r.IntN(5) == 0 {
				status = types.ToolResultStatusError
			}
			results = append(results, &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
				ToolUseId: aws.String(tid), Status: status, Content: []types.ToolResultContentBlock{content},
			}})
		}
		history = append(history, assistant(uses...), user(results...))
	}
	return history
}

// TestTrimKeepsHistoriesValid trims random tool-heavy histories to random
// budgets: every trimmed history, and the summary request of what was
// dropped, passes bedrocktest's validator (pairs intact, toolConfig
// present, first message a user message, roles alternating), ends with
// the same message, and is no larger than the original. ask stands for
// converse's summary prompt, added as the summary request adds it.
func TestTrimKeepsHistoriesValid(t *testing.T) {
	const ask = "Summarize the conversation so far."
	cfg := &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
		Name: aws.String("lookup"), InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(map[string]any{"type": "object"})},
	}}}}
	for seed := range uint64(150) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 15))
			history := randomHistory(r)
			before := wire.EstimateTokens(&bedrockruntime.ConverseInput{Messages: history, ToolConfig: cfg})
			budget := r.IntN(before + 1)
			tr := New(history, []int{100, 1000, 4096}[r.IntN(3)], before)
			tr.Shorten(budget)
			tr.Drop(budget)
			trimmed := tr.Messages()
			newest, kept := history[len(history)-1], trimmed[len(trimmed)-1]
			assert.Equal(t, newest.Role, kept.Role)
			assert.Len(t, kept.Content, len(newest.Content), "the newest message is kept, if shortened")
			after := wire.EstimateTokens(&bedrockruntime.ConverseInput{Messages: trimmed, ToolConfig: cfg})
			assert.LessOrEqual(t, after, before)
			assert.InDelta(t, after, tr.Tokens(), float64(after)/50+float64(len(history)), "the running estimate follows the cuts")
			if tr.Tokens() > budget {
				assert.Negative(t, slices.IndexFunc(trimmed[1:], isPrompt), "over budget with a prompt left to cut at")
				assert.False(t, len(trimmed) > 3 && message.HasToolUse(trimmed[1]) && message.AnswersTools(trimmed[2]), "over budget with a pair left to drop")
			}
			if tr.Dropped() > 0 {
				tr.AddSummary("what happened")
			}
			trimmed = tr.Messages()

			e := bedrocktest.Validate(&bedrocktest.Request{Operation: recording.OpConverse, ConverseInput: bedrockruntime.ConverseInput{ModelId: aws.String("anthropic.claude-sonnet-4-5-20250929-v1:0"), Messages: trimmed, ToolConfig: cfg}})
			require.Nil(t, e, "the trimmed history is not valid")
			assert.Equal(t, types.ConversationRoleUser, trimmed[0].Role)
			assert.True(t, isPrompt(trimmed[0]), "the first message is a prompt")
			if tr.Dropped() > 0 {
				prefix := tr.DroppedPrefix()
				req := append(prefix[:len(prefix):len(prefix)], types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: ask}}})
				if prefix[len(prefix)-1].Role == types.ConversationRoleUser {
					last := prefix[len(prefix)-1]
					req = append(prefix[:len(prefix)-1:len(prefix)-1], types.Message{Role: last.Role, Content: append(last.Content[:len(last.Content):len(last.Content)], &types.ContentBlockMemberText{Value: ask})})
				}
				e := bedrocktest.Validate(&bedrocktest.Request{Operation: recording.OpConverse, ConverseInput: bedrockruntime.ConverseInput{ModelId: aws.String("anthropic.claude-sonnet-4-5-20250929-v1:0"), Messages: req, ToolConfig: cfg}})
				require.Nil(t, e, "the summary request is not valid")
			}
		})
	}
}
