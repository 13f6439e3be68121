package converse

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/wire"
)

// trimmer cuts a history down to a token budget, in the order of
// ContextPolicy, keeping it a valid conversation. It never writes the
// messages it was given: a shortened message is a new one.
type trimmer struct {
	msgs   []types.Message
	limit  int // ToolResultBytes
	tokens int // the running estimate of the request

	before []types.Message // messages dropped before the first kept prompt
	pairs  []types.Message // toolUse/toolResults pairs dropped after it

	shortened, dropped int
}

func newTrimmer(history []types.Message, limit, tokens int) *trimmer {
	return &trimmer{msgs: slices.Clone(history), limit: limit, tokens: tokens}
}

// emptyMessages is the canonical JSON of a request with no messages.
const emptyMessages = len(`{"messages":[]}`)

// messageTokens estimates the tokens one message adds to a request.
func messageTokens(m types.Message) int {
	b, err := wire.CanonicalJSON(&bedrockruntime.ConverseInput{Messages: []types.Message{m}})
	if err != nil {
		return 0
	}
	return (len(b) - emptyMessages) / wire.BytesPerToken
}

// shorten cuts the oldest tool results longer than the limit to their head
// and tail, until the estimate is within budget.
func (t *trimmer) shorten(budget int) {
	for i := range t.msgs {
		if t.tokens <= budget {
			return
		}
		m := t.msgs[i]
		if m.Role != types.ConversationRoleUser || !message.AnswersTools(m) {
			continue
		}
		content := slices.Clone(m.Content)
		changed := false
		for k, b := range content {
			tr, ok := b.(*types.ContentBlockMemberToolResult)
			if !ok {
				continue
			}
			if short, ok := shortenResult(tr.Value, t.limit); ok {
				content[k] = &types.ContentBlockMemberToolResult{Value: short}
				changed = true
				t.shortened++
			}
		}
		if changed {
			short := types.Message{Role: m.Role, Content: content}
			t.tokens -= messageTokens(m) - messageTokens(short)
			t.msgs[i] = short
		}
	}
}

// cutNote marks what shortenResult cut.
const cutNote = "\n[... %d bytes cut to fit the context window ...]\n"

// shortenResult returns r with its text and JSON content, when longer than
// limit bytes, as one text block of its head and tail around a note of
// what was cut, no longer than limit; images and documents stay.
func shortenResult(r types.ToolResultBlock, limit int) (types.ToolResultBlock, bool) {
	var text strings.Builder
	var others []types.ToolResultContentBlock
	for _, c := range r.Content {
		switch v := c.(type) {
		case *types.ToolResultContentBlockMemberText:
			text.WriteString(v.Value)
		case *types.ToolResultContentBlockMemberJson:
			b, err := v.Value.MarshalSmithyDocument()
			if err != nil {
				return r, false
			}
			text.Write(b)
		default:
			others = append(others, c)
		}
	}
	s := text.String()
	if len(s) <= limit {
		return r, false
	}
	half := max((limit-len(cutNote)-20)/2, 1)
	head, tail := half, len(s)-half
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	short := s[:head] + fmt.Sprintf(cutNote, tail-head) + s[tail:]
	r.Content = append([]types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: short}}, others...)
	return r, true
}

// drop takes out the oldest exchanges until the estimate is within
// budget: first everything before a later prompt (a user message holding
// no tool results), then the toolUse/toolResults pairs after the first
// prompt, never the newest message or the pair it answers.
func (t *trimmer) drop(budget int) {
	for t.tokens > budget {
		k := slices.IndexFunc(t.msgs[1:], isPrompt) + 1
		if k == 0 {
			break
		}
		t.remove(0, k, &t.before)
	}
	for t.tokens > budget && len(t.msgs) > 3 && message.HasToolUse(t.msgs[1]) && message.AnswersTools(t.msgs[2]) {
		t.remove(1, 3, &t.pairs)
	}
}

// isPrompt reports a user message that answers no tool call, where a
// history may start.
func isPrompt(m types.Message) bool {
	return m.Role == types.ConversationRoleUser && len(m.Content) > 0 && !message.AnswersTools(m)
}

// remove drops msgs[i:j] into gone.
func (t *trimmer) remove(i, j int, gone *[]types.Message) {
	for _, m := range t.msgs[i:j] {
		t.tokens -= messageTokens(m)
	}
	*gone = append(*gone, t.msgs[i:j]...)
	t.dropped += j - i
	t.msgs = slices.Delete(t.msgs, i, j)
}

// droppedPrefix is the start of the history the dropped messages were, for
// the summary call: those dropped before the first kept prompt, and with
// the pairs dropped after it, that prompt too.
func (t *trimmer) droppedPrefix() []types.Message {
	if len(t.pairs) == 0 {
		return t.before
	}
	return append(append(slices.Clone(t.before), t.msgs[0]), t.pairs...)
}

// addSummary adds the summary of the dropped messages to the first kept
// prompt, as a text block after its content.
func (t *trimmer) addSummary(summary string) {
	first := t.msgs[0]
	note := &types.ContentBlockMemberText{Value: fmt.Sprintf("[Summary of %d earlier messages, dropped to fit the context window: %s]", t.dropped, summary)}
	t.msgs[0] = types.Message{Role: first.Role, Content: append(slices.Clone(first.Content), note)}
}

// history is the trimmed history.
func (t *trimmer) history() []types.Message {
	return t.msgs
}
