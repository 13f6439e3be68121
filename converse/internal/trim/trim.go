// Package trim cuts a conversation's history down to a token budget, keeping
// it a history Bedrock takes. Tool results are shortened to their head and
// tail first. Then the oldest exchanges are dropped, with the room for a
// summary of what was dropped. It decides nothing of when to trim or how
// much: the caller's policy gives the budget (converse's ContextPolicy),
// makes the summary call and reports the trim.
package trim

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/wire"
)

// History is a history being trimmed, with the running estimate of its
// request's tokens. It never writes the messages it was given: a shortened
// message is a new one.
type History struct {
	msgs   []types.Message
	limit  int // the length past which a tool result's text is shortened
	tokens int // the running estimate of the request

	before []types.Message // messages dropped before the first kept prompt
	after  []types.Message // after it, to the last toolUse/toolResults pair dropped

	shortened, dropped int
}

// New starts trimming history, whose request is estimated at tokens,
// shortening tool results longer than limit bytes.
func New(history []types.Message, limit, tokens int) *History {
	return &History{msgs: slices.Clone(history), limit: limit, tokens: tokens}
}

// Shorten cuts the oldest tool results longer than the limit to their head
// and tail, until the estimate is within budget.
func (h *History) Shorten(budget int) {
	for i := range h.msgs {
		if h.tokens <= budget {
			return
		}
		m := h.msgs[i]
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
			if short, ok := shortenResult(tr.Value, h.limit); ok {
				content[k] = &types.ContentBlockMemberToolResult{Value: short}
				changed = true
				h.shortened++
			}
		}
		if changed {
			short := types.Message{Role: m.Role, Content: content}
			h.tokens -= wire.MessageTokens(m) - wire.MessageTokens(short)
			h.msgs[i] = short
		}
	}
}

// cutNote marks what shortenResult cut.
const cutNote = "\n[... %d bytes cut to fit the context window ...]\n"

// shortenResult returns r with its text and JSON content, when longer than
// limit bytes, as one text block no longer than limit. The block holds the
// head and tail around a note of what was cut. Images and documents stay.
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

// Drop takes out the oldest exchanges until the estimate is within budget.
// prompt is the index of the current Send's prompt, which stays. First go the
// exchanges before it, oldest first, each running up to the next prompt (a
// user message holding no tool results). Then go the oldest
// toolUse/toolResults pairs after it. It never drops the newest message or
// the pair it answers. Nor does it drop the assistant message that opened the
// current tool loop when that holds a reasoning block. That message is the
// first after the last user message holding no tool results. With extended
// thinking, Claude takes a request that continues a tool loop only when that
// message starts with its reasoning. A correction of a structured answer is a
// user text message too, which is why the caller says where its prompt is.
func (h *History) Drop(budget, prompt int) {
	prompt = min(max(prompt, 0), len(h.msgs)-1)
	for h.tokens > budget && prompt > 0 {
		k := slices.IndexFunc(h.msgs[1:prompt+1], isPrompt) + 1
		if k == 0 {
			break
		}
		h.remove(0, k, &h.before)
		prompt -= k
	}
	next := 1 // the first message after the prompt not yet in h.after
	for h.tokens > budget {
		i := h.oldestPair(next)
		if i < 0 {
			break
		}
		h.after = append(h.after, h.msgs[next:i]...)
		h.remove(i, i+2, &h.after)
		next = i
	}
}

// oldestPair is the index of the oldest toolUse/toolResults pair from
// msgs[from] on that Drop may take out, or -1.
func (h *History) oldestPair(from int) int {
	keep := h.loopReasoning()
	for i := from; i+2 < len(h.msgs); i++ {
		if i != keep && message.HasToolUse(h.msgs[i]) && message.AnswersTools(h.msgs[i+1]) {
			return i
		}
	}
	return -1
}

// loopReasoning is the index of the assistant message that opened the
// current tool loop, the first after the last user message holding no
// tool results, if it holds a reasoning block; -1 otherwise.
func (h *History) loopReasoning() int {
	for i := len(h.msgs) - 1; i >= 0; i-- {
		m := h.msgs[i]
		if m.Role != types.ConversationRoleUser || message.AnswersTools(m) {
			continue
		}
		if i+1 < len(h.msgs) && h.msgs[i+1].Role == types.ConversationRoleAssistant && slices.ContainsFunc(h.msgs[i+1].Content, message.IsReasoning) {
			return i + 1
		}
		return -1
	}
	return -1
}

// isPrompt reports a user message that answers no tool call, where a
// history may start.
func isPrompt(m types.Message) bool {
	return m.Role == types.ConversationRoleUser && len(m.Content) > 0 && !message.AnswersTools(m)
}

// remove drops msgs[i:j] into gone.
func (h *History) remove(i, j int, gone *[]types.Message) {
	for _, m := range h.msgs[i:j] {
		h.tokens -= wire.MessageTokens(m)
	}
	*gone = append(*gone, h.msgs[i:j]...)
	h.dropped += j - i
	h.msgs = slices.Delete(h.msgs, i, j)
}

// DroppedPrefix is the start of the history the dropped messages were, for
// the summary call. It holds those dropped before the first kept prompt.
// With pairs dropped after it, it holds that prompt and what followed it
// to the last pair dropped. The messages kept between the pairs are
// included, so that the prefix is a history Bedrock takes. A tool loop's
// reasoning stays first.
func (h *History) DroppedPrefix() []types.Message {
	if len(h.after) == 0 {
		return h.before
	}
	return append(append(slices.Clone(h.before), h.msgs[0]), h.after...)
}

// AddSummary adds the summary of the dropped messages to the first kept
// prompt, as a text block after its content.
func (h *History) AddSummary(summary string) {
	first := h.msgs[0]
	note := &types.ContentBlockMemberText{Value: fmt.Sprintf("[Summary of %d earlier messages, dropped to fit the context window: %s]", h.dropped, summary)}
	h.msgs[0] = types.Message{Role: first.Role, Content: append(slices.Clone(first.Content), note)}
}

// Messages is the trimmed history.
func (h *History) Messages() []types.Message {
	return h.msgs
}

// Tokens is the running estimate of the trimmed history's request.
func (h *History) Tokens() int {
	return h.tokens
}

// Shortened is the number of tool results shortened.
func (h *History) Shortened() int {
	return h.shortened
}

// Dropped is the number of messages dropped.
func (h *History) Dropped() int {
	return h.dropped
}
