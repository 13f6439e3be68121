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

// randomHistory is a tool-heavy conversation: prompts, tool rounds and
// final answers. A round has one to three calls with results of every
// size (text and JSON, some failed). It ends with a user message, as a
// request does. With
// thinking, as extended thinking answers, the first assistant message
// after each user text message starts with a reasoning block, and others
// may (interleaved thinking).
func randomHistory(r *rand.Rand, thinking bool) []types.Message {
	var history []types.Message
	txt := func(s string) types.ContentBlock { return &types.ContentBlockMemberText{Value: s} }
	user := func(b ...types.ContentBlock) types.Message {
		return types.Message{Role: types.ConversationRoleUser, Content: b}
	}
	assistant := func(b ...types.ContentBlock) types.Message {
		return types.Message{Role: types.ConversationRoleAssistant, Content: b}
	}
	// reason starts the blocks of an assistant message with a reasoning
	// block, as thinking would.
	reason := func(b ...types.ContentBlock) []types.ContentBlock {
		last := history[len(history)-1]
		if !thinking || message.AnswersTools(last) && r.IntN(2) == 0 {
			return b
		}
		return append([]types.ContentBlock{&types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{
			Value: types.ReasoningTextBlock{Text: aws.String("let me think"), Signature: aws.String("sig")},
		}}}, b...)
	}
	history = []types.Message{user(txt("first prompt"))}
	id := 0
	for round := r.IntN(25); round > 0; round-- {
		if r.IntN(4) == 0 {
			history = append(history, assistant(reason(txt("an answer"))...), user(txt(fmt.Sprint("prompt ", round))))
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
		history = append(history, assistant(reason(uses...)...), user(results...))
	}
	return history
}

// TestTrimKeepsHistoriesValid trims random tool-heavy histories to random
// budgets. The Send's prompt is any of their user text messages; those
// after it stand for a structured Send's corrections. Every trimmed
// history, and the summary request of what was dropped, passes
// bedrocktest's validator. So pairs are intact, toolConfig is present, the
// first message is a user message and roles alternate. With extended
// thinking, the reasoning that opened the tool loop comes first. Every
// trimmed history ends with the same message, and is no larger than the
// original. Over budget, it starts with the Send's prompt
// and holds no pair left to drop. ask stands for converse's summary
// prompt, added as the summary request adds it.
func TestTrimKeepsHistoriesValid(t *testing.T) {
	const ask = "Summarize the conversation so far."
	cfg := &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
		Name: aws.String("lookup"), InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(map[string]any{"type": "object"})},
	}}}}
	for seed := range uint64(150) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 15))
			var fields document.Interface
			if seed%2 == 1 {
				fields = document.NewLazyDocument(map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}})
			}
			validate := func(msgs []types.Message) *bedrocktest.Error {
				return bedrocktest.Validate(&bedrocktest.Request{Operation: recording.OpConverse, ConverseInput: bedrockruntime.ConverseInput{
					ModelId: aws.String("anthropic.claude-sonnet-4-5-20250929-v1:0"), Messages: msgs, ToolConfig: cfg, AdditionalModelRequestFields: fields,
				}})
			}
			history := randomHistory(r, fields != nil)
			require.Nil(t, validate(history), "the history to trim is not valid")
			var prompts []int
			for i, m := range history {
				if isPrompt(m) {
					prompts = append(prompts, i)
				}
			}
			prompt := prompts[r.IntN(len(prompts))]
			before := wire.EstimateTokens(&bedrockruntime.ConverseInput{Messages: history, ToolConfig: cfg})
			budget := r.IntN(before + 1)
			tr := New(history, []int{100, 1000, 4096}[r.IntN(3)], before)
			tr.Shorten(budget)
			tr.Drop(budget, prompt)
			trimmed := tr.Messages()
			newest, kept := history[len(history)-1], trimmed[len(trimmed)-1]
			assert.Equal(t, newest.Role, kept.Role)
			assert.Len(t, kept.Content, len(newest.Content), "the newest message is kept, if shortened")
			after := wire.EstimateTokens(&bedrockruntime.ConverseInput{Messages: trimmed, ToolConfig: cfg})
			assert.LessOrEqual(t, after, before)
			assert.InDelta(t, after, tr.Tokens(), float64(after)/50+float64(len(history)), "the running estimate follows the cuts")
			assert.True(t, slices.ContainsFunc(trimmed, func(m types.Message) bool { return m.Content[0] == history[prompt].Content[0] }), "the Send's prompt is kept")
			if tr.Tokens() > budget {
				assert.Equal(t, history[prompt], trimmed[0], "over budget with a prompt left to cut at")
				opener := -1 // the message that opened the tool loop, if it holds reasoning
				for i := len(trimmed) - 1; i >= 0; i-- {
					if isPrompt(trimmed[i]) {
						if i+1 < len(trimmed) && slices.ContainsFunc(trimmed[i+1].Content, message.IsReasoning) {
							opener = i + 1
						}
						break
					}
				}
				for i := 1; i+2 < len(trimmed); i++ {
					assert.False(t, i != opener && message.HasToolUse(trimmed[i]) && message.AnswersTools(trimmed[i+1]), "over budget with the pair at %d left to drop", i)
				}
			}
			if tr.Dropped() > 0 {
				tr.AddSummary("what happened")
			}
			trimmed = tr.Messages()

			require.Nil(t, validate(trimmed), "the trimmed history is not valid")
			assert.Equal(t, types.ConversationRoleUser, trimmed[0].Role)
			assert.True(t, isPrompt(trimmed[0]), "the first message is a prompt")
			if tr.Dropped() > 0 {
				prefix := tr.DroppedPrefix()
				req := append(prefix[:len(prefix):len(prefix)], types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: ask}}})
				if prefix[len(prefix)-1].Role == types.ConversationRoleUser {
					last := prefix[len(prefix)-1]
					req = append(prefix[:len(prefix)-1:len(prefix)-1], types.Message{Role: last.Role, Content: append(last.Content[:len(last.Content):len(last.Content)], &types.ContentBlockMemberText{Value: ask})})
				}
				require.Nil(t, validate(req), "the summary request is not valid")
			}
		})
	}
}
