package trim

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/internal/wire"
)

func text(s string) types.ContentBlock { return &types.ContentBlockMemberText{Value: s} }

func user(b ...types.ContentBlock) types.Message {
	return types.Message{Role: types.ConversationRoleUser, Content: b}
}

func assistant(b ...types.ContentBlock) types.Message {
	return types.Message{Role: types.ConversationRoleAssistant, Content: b}
}

func use(id string) types.ContentBlock {
	return &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
		ToolUseId: aws.String(id), Name: aws.String("fetch"), Input: document.NewLazyDocument(map[string]any{}),
	}}
}

// think is a reasoning block, as extended thinking gives it.
func think(s string) types.ContentBlock {
	return &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{
		Value: types.ReasoningTextBlock{Text: aws.String(s), Signature: aws.String("sig")},
	}}
}

// result is the toolResult of id, its content of the blocks given.
func result(id string, content ...types.ToolResultContentBlock) types.ContentBlock {
	return &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
		ToolUseId: aws.String(id), Status: types.ToolResultStatusSuccess, Content: content,
	}}
}

func resultText(s string) types.ToolResultContentBlock {
	return &types.ToolResultContentBlockMemberText{Value: s}
}

var image = &types.ToolResultContentBlockMemberImage{Value: types.ImageBlock{
	Format: types.ImageFormatPng, Source: &types.ImageSourceMemberBytes{Value: []byte("png")},
}}

// describe says what msgs hold, a message a word: "u:p1", "a:think+use(t1)",
// "u:res(t1)=1200" (the bytes of its text), blocks joined with "+".
func describe(msgs []types.Message) string {
	var words []string
	for _, m := range msgs {
		var blocks []string
		for _, b := range m.Content {
			switch v := b.(type) {
			case *types.ContentBlockMemberText:
				blocks = append(blocks, v.Value)
			case *types.ContentBlockMemberReasoningContent:
				blocks = append(blocks, "think")
			case *types.ContentBlockMemberToolUse:
				blocks = append(blocks, "use("+aws.ToString(v.Value.ToolUseId)+")")
			case *types.ContentBlockMemberToolResult:
				n := 0
				for _, c := range v.Value.Content {
					if t, ok := c.(*types.ToolResultContentBlockMemberText); ok {
						n += len(t.Value)
					}
				}
				blocks = append(blocks, fmt.Sprintf("res(%s)=%d", aws.ToString(v.Value.ToolUseId), n))
			}
		}
		words = append(words, string(m.Role)[:1]+":"+strings.Join(blocks, "+"))
	}
	return strings.Join(words, " ")
}

func estimate(msgs []types.Message) int {
	return wire.EstimateTokens(&bedrockruntime.ConverseInput{Messages: msgs})
}

func TestShorten(t *testing.T) {
	long := strings.Repeat("x", 4000)
	for _, tc := range []struct {
		name   string
		msgs   []types.Message
		budget func(tokens int) int
		want   string
		count  int
	}{{
		name:   "within budget: nothing cut",
		msgs:   []types.Message{user(text("p1")), assistant(use("t1")), user(result("t1", resultText(long)))},
		budget: func(tokens int) int { return tokens },
		want:   "u:p1 a:use(t1) u:res(t1)=4000",
	}, {
		name:   "the oldest long result first, until within budget",
		msgs:   []types.Message{user(text("p1")), assistant(use("t1")), user(result("t1", resultText(long))), assistant(use("t2")), user(result("t2", resultText(long)))},
		budget: func(tokens int) int { return tokens - 1 },
		want:   "u:p1 a:use(t1) u:res(t1)=482 a:use(t2) u:res(t2)=4000",
		count:  1,
	}, {
		name:   "every long result of a message, and of the next",
		msgs:   []types.Message{user(text("p1")), assistant(use("t1"), use("t2")), user(result("t1", resultText(long)), result("t2", resultText(long))), assistant(use("t3")), user(result("t3", resultText(long)))},
		budget: func(int) int { return 0 },
		want:   "u:p1 a:use(t1)+use(t2) u:res(t1)=482+res(t2)=482 a:use(t3) u:res(t3)=482",
		count:  3,
	}, {
		name:   "short results and prompts stay",
		msgs:   []types.Message{user(text(long)), assistant(use("t1")), user(result("t1", resultText("ok")))},
		budget: func(int) int { return 0 },
		want:   "u:" + long + " a:use(t1) u:res(t1)=2",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			before := describe(tc.msgs)
			tokens := estimate(tc.msgs)
			h := New(tc.msgs, 500, tokens)
			h.Shorten(tc.budget(tokens))
			assert.Equal(t, tc.want, describe(h.Messages()))
			assert.Equal(t, tc.count, h.Shortened())
			assert.Zero(t, h.Dropped())
			assert.InDelta(t, estimate(h.Messages()), h.Tokens(), float64(len(tc.msgs)), "the running estimate follows the cuts")
			assert.Equal(t, before, describe(tc.msgs), "the messages given are not written")
		})
	}
}

func TestDrop(t *testing.T) {
	for _, tc := range []struct {
		name    string
		msgs    []types.Message
		prompt  int // the index of the Send's prompt
		budget  int // -1: the whole history's estimate
		want    string
		prefix  string // DroppedPrefix
		dropped int
	}{{
		name:   "within budget: nothing dropped",
		msgs:   []types.Message{user(text("p1")), assistant(text("a1")), user(text("p2"))},
		prompt: 2,
		budget: -1,
		want:   "u:p1 a:a1 u:p2",
	}, {
		name:    "everything before the newest prompt",
		msgs:    []types.Message{user(text("p1")), assistant(text("a1")), user(text("p2")), assistant(text("a2")), user(text("p3"))},
		prompt:  4,
		want:    "u:p3",
		prefix:  "u:p1 a:a1 u:p2 a:a2",
		dropped: 4,
	}, {
		name:    "a tool loop's pairs after its prompt, never the newest",
		msgs:    []types.Message{user(text("p1")), assistant(use("t1")), user(result("t1", resultText("r1"))), assistant(use("t2")), user(result("t2", resultText("r2")))},
		want:    "u:p1 a:use(t2) u:res(t2)=2",
		prefix:  "u:p1 a:use(t1) u:res(t1)=2",
		dropped: 2,
	}, {
		name: "before a later prompt, then the pairs after it",
		msgs: []types.Message{user(text("p1")), assistant(text("a1")), user(text("p2")),
			assistant(use("t1")), user(result("t1", resultText("r1"))), assistant(use("t2")), user(result("t2", resultText("r2")))},
		prompt:  2,
		want:    "u:p2 a:use(t2) u:res(t2)=2",
		prefix:  "u:p1 a:a1 u:p2 a:use(t1) u:res(t1)=2",
		dropped: 4,
	}, {
		name: "a message of results is no prompt to cut at",
		msgs: []types.Message{user(text("p1")), assistant(use("t1")), user(result("t1", resultText("r1")))},
		want: "u:p1 a:use(t1) u:res(t1)=2",
	}, {
		name: "a correction is no prompt to cut at",
		msgs: []types.Message{user(text("p1")), assistant(text("a1")), user(text("p2")), assistant(text("bad")), user(text("Error: fix it")),
			assistant(text("still bad")), user(text("Error: fix it again"))},
		prompt:  2,
		want:    "u:p2 a:bad u:Error: fix it a:still bad u:Error: fix it again",
		prefix:  "u:p1 a:a1",
		dropped: 2,
	}, {
		name: "the reasoning that opened the loop stays, the pairs after it go",
		msgs: []types.Message{user(text("p1")), assistant(think("plan"), use("t1")), user(result("t1", resultText("r1"))),
			assistant(use("t2")), user(result("t2", resultText("r2"))), assistant(use("t3")), user(result("t3", resultText("r3")))},
		want:    "u:p1 a:think+use(t1) u:res(t1)=2 a:use(t3) u:res(t3)=2",
		prefix:  "u:p1 a:think+use(t1) u:res(t1)=2 a:use(t2) u:res(t2)=2",
		dropped: 2,
	}, {
		name: "interleaved reasoning: only the loop's first message stays",
		msgs: []types.Message{user(text("p1")), assistant(think("plan"), use("t1")), user(result("t1", resultText("r1"))),
			assistant(think("more"), use("t2")), user(result("t2", resultText("r2"))), assistant(think("last"), use("t3")), user(result("t3", resultText("r3")))},
		want:    "u:p1 a:think+use(t1) u:res(t1)=2 a:think+use(t3) u:res(t3)=2",
		prefix:  "u:p1 a:think+use(t1) u:res(t1)=2 a:think+use(t2) u:res(t2)=2",
		dropped: 2,
	}, {
		name: "an earlier loop's reasoning may go",
		msgs: []types.Message{user(text("p1")), assistant(think("plan"), use("t1")), user(result("t1", resultText("r1"))),
			assistant(think("answer"), text("bad")), user(text("Error: fix it")),
			assistant(think("again"), use("t2")), user(result("t2", resultText("r2"))), assistant(use("t3")), user(result("t3", resultText("r3")))},
		want:    "u:p1 a:think+bad u:Error: fix it a:think+use(t2) u:res(t2)=2 a:use(t3) u:res(t3)=2",
		prefix:  "u:p1 a:think+use(t1) u:res(t1)=2",
		dropped: 2,
	}, {
		name: "the loop's reasoning and the newest pair: nothing to drop",
		msgs: []types.Message{user(text("p1")), assistant(think("plan"), use("t1")), user(result("t1", resultText("r1"))),
			assistant(use("t2")), user(result("t2", resultText("r2")))},
		want: "u:p1 a:think+use(t1) u:res(t1)=2 a:use(t2) u:res(t2)=2",
	}, {
		name:    "a prompt index past the end is the newest message",
		msgs:    []types.Message{user(text("p1")), assistant(text("a1")), user(text("p2"))},
		prompt:  9,
		want:    "u:p2",
		prefix:  "u:p1 a:a1",
		dropped: 2,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			tokens := estimate(tc.msgs)
			budget := tc.budget
			if budget < 0 {
				budget = tokens
			}
			h := New(tc.msgs, 500, tokens)
			h.Drop(budget, tc.prompt)
			assert.Equal(t, tc.want, describe(h.Messages()))
			assert.Equal(t, tc.prefix, describe(h.DroppedPrefix()))
			assert.Equal(t, tc.dropped, h.Dropped())
			assert.Zero(t, h.Shortened())
			assert.InDelta(t, estimate(h.Messages()), h.Tokens(), float64(len(tc.msgs)), "the running estimate follows the cuts")
		})
	}
}

func TestAddSummary(t *testing.T) {
	for _, tc := range []struct {
		name string
		msgs []types.Message
		want string
	}{{
		name: "after the first prompt's text",
		msgs: []types.Message{user(text("p1")), assistant(text("a1")), user(text("p2")), assistant(text("a2")), user(text("p3"))},
		want: "u:p3+[Summary of 4 earlier messages, dropped to fit the context window: they talked]",
	}, {
		name: "the first prompt of a tool loop",
		msgs: []types.Message{user(text("p1")), assistant(use("t1")), user(result("t1", resultText("r1"))), assistant(use("t2")), user(result("t2", resultText("r2")))},
		want: "u:p1+[Summary of 2 earlier messages, dropped to fit the context window: they talked] a:use(t2) u:res(t2)=2",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			h := New(tc.msgs, 500, estimate(tc.msgs))
			h.Drop(0, len(tc.msgs)-1)
			kept := describe(h.Messages())
			h.AddSummary("they talked")
			assert.Equal(t, tc.want, describe(h.Messages()))
			assert.NotEqual(t, kept, describe(h.Messages()))
			assert.Equal(t, describe(tc.msgs[:1]), "u:p1", "the messages given are not written")
		})
	}
}

func TestShortenResult(t *testing.T) {
	json := &types.ToolResultContentBlockMemberJson{Value: document.NewLazyDocument(map[string]any{"data": strings.Repeat("y", 2000)})}
	for _, tc := range []struct {
		name    string
		content []types.ToolResultContentBlock
		limit   int
		short   bool
		head    string // of the text block the result becomes
		tail    string
		others  int // the blocks after it
	}{
		{name: "within the limit", content: []types.ToolResultContentBlock{resultText("short")}, limit: 1000},
		{name: "head and tail of multibyte text", content: []types.ToolResultContentBlock{resultText("HEAD" + strings.Repeat("ü", 3000) + "TAIL")},
			limit: 1000, short: true, head: "HEAD", tail: "TAIL"},
		{name: "JSON as text", content: []types.ToolResultContentBlock{json}, limit: 1000, short: true, head: `{"data":"yyy`, tail: `yyy"}`},
		{name: "texts joined, the image kept after them", content: []types.ToolResultContentBlock{resultText(strings.Repeat("a", 800)), image, resultText(strings.Repeat("b", 800))},
			limit: 1000, short: true, head: "aaa", tail: "bbb", others: 1},
		{name: "an image alone", content: []types.ToolResultContentBlock{image}, limit: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := types.ToolResultBlock{ToolUseId: aws.String("t1"), Status: types.ToolResultStatusError, Content: tc.content}
			got, ok := shortenResult(r, tc.limit)
			require.Equal(t, tc.short, ok)
			assert.Equal(t, r.Status, got.Status)
			assert.Equal(t, r.ToolUseId, got.ToolUseId)
			if !ok {
				assert.Equal(t, r, got)
				return
			}
			require.Len(t, got.Content, 1+tc.others)
			s := got.Content[0].(*types.ToolResultContentBlockMemberText).Value
			assert.LessOrEqual(t, len(s), tc.limit)
			assert.True(t, strings.HasPrefix(s, tc.head), "head kept: %.20q", s)
			assert.True(t, strings.HasSuffix(s, tc.tail), "tail kept: %.20q", s[len(s)-20:])
			assert.Contains(t, s, "bytes cut to fit the context window")
			assert.True(t, utf8.ValidString(s))
			_, again := shortenResult(got, tc.limit)
			assert.False(t, again, "a shortened result is not shortened again")
		})
	}
}

func TestMessageTokens(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  types.Message
	}{
		{"a prompt", user(text(strings.Repeat("x", 400)))},
		{"a call", assistant(text("let me look"), use("t1"))},
		{"results", user(result("t1", resultText(strings.Repeat("é", 1000)), image))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// what the message adds to a request, to a token for the rounding
			alone := estimate([]types.Message{tc.msg}) - estimate([]types.Message{})
			assert.InDelta(t, alone, wire.MessageTokens(tc.msg), 1)
			two := []types.Message{user(text("p1")), tc.msg}
			assert.InDelta(t, estimate(two)-estimate(two[:1]), wire.MessageTokens(tc.msg), 1)
		})
	}
}

func TestIsPrompt(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  types.Message
		want bool
	}{
		{"a user's text", user(text("p1")), true},
		{"results", user(result("t1", resultText("r1"))), false},
		{"an empty user message", user(), false},
		{"an assistant's text", assistant(text("a1")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, isPrompt(tc.msg))
		})
	}
}
