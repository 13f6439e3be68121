package converse_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// fetchTool returns pages of about 12 × words bytes (3,000 for 250), so
// that a tool loop soon fills a small context window.
func fetchTool(t *testing.T, words int) *tools.Registry {
	t.Helper()
	type in struct {
		Page int `json:"page"`
	}
	tool, err := tools.New("fetch", "Fetches a page of the archive.", func(ctx context.Context, p in) (string, error) {
		return fmt.Sprintf("page %d: ", p.Page) + strings.Repeat("lorem ipsum ", words), nil
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(tool)
	require.NoError(t, err)
	return reg
}

// fetchLoop is a script of calls to fetch, one page a turn, then an answer.
func fetchLoop(calls int) []*bedrocktest.Reply {
	var replies []*bedrocktest.Reply
	for i := 1; i <= calls; i++ {
		replies = append(replies, bedrocktest.ToolUse("", bedrocktest.Call{ID: fmt.Sprint("tooluse_", i), Name: "fetch", Input: map[string]any{"page": i}}))
	}
	return append(replies, bedrocktest.Text("I read them all."))
}

// readArchive runs a conversation that fetches pages of words words, one a
// turn, through bedrocktest's context window, under policy. It checks that it
// finished and trimmed. It returns the server, the conversation, the result
// and the trims.
func readArchive(t *testing.T, window, pages, words int, policy converse.ContextPolicy) (*bedrocktest.Server, *converse.Conversation, *converse.Result, []converse.Trimmed) {
	t.Helper()
	srv, client := serve(t, bedrocktest.Script(fetchLoop(pages)...), func(o *bedrocktest.Options) {
		o.MaxInputTokens = window
		o.Accounting = true
	})
	var trims []converse.Trimmed
	c := converse.New(client, claude, fetchTool(t, words), func(o *converse.Options) {
		o.MaxTurns = 2 * pages // room to spare: the loop needs pages+1
		o.Context = &policy
		o.OnEvent = func(ev converse.Event) {
			if tr, ok := ev.(converse.Trimmed); ok {
				trims = append(trims, tr)
			}
		}
	})
	res, err := c.Send(context.Background(), fmt.Sprintf("Read pages 1 to %d of the archive.", pages))
	require.NoError(t, err)
	assert.Equal(t, pages+1, res.Turns)
	assert.Equal(t, "I read them all.", res.Text)
	require.NotEmpty(t, trims)
	t.Logf("trims: %+v", trims)
	return srv, c, res, trims
}

// TestLongConversationOverflowsAndFinishes runs a tool loop that outgrows
// bedrocktest's context window: with a ContextPolicy it finishes, the
// history trimmed on Bedrock's overflow error, or before each call.
func TestLongConversationOverflowsAndFinishes(t *testing.T) {
	const window = 4000
	for _, tt := range []struct {
		name   string
		policy converse.ContextPolicy
	}{
		{"on overflow", converse.ContextPolicy{}},
		{"before the call", converse.ContextPolicy{MaxInputTokens: window - 500}},
		{"with CountTokens", converse.ContextPolicy{MaxInputTokens: window - 500, CountTokens: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, c, res, trims := readArchive(t, window, 12, 250, tt.policy)
			for _, tr := range trims {
				assert.Less(t, tr.TokensAfter, tr.TokensBefore)
				assert.Equal(t, tt.policy.MaxInputTokens == 0, tr.Overflow)
			}

			var converses, counts int
			for _, req := range srv.Requests() {
				switch req.Operation {
				case bedrocktest.OpCountTokens:
					counts++
				default:
					converses++
					assert.LessOrEqual(t, bedrocktest.EstimateTokens(req), window+window/4, "a request far over the window")
				}
			}
			if tt.policy.MaxInputTokens > 0 {
				assert.Equal(t, 13, converses, "trimmed before each call, no request overflows")
			} else {
				assert.Equal(t, 13+len(trims), converses, "each overflow is retried once")
			}
			assert.Equal(t, tt.policy.CountTokens, counts > 0)

			h := c.History()
			assert.Less(t, len(h), 2+2*12, "the kept history is the trimmed one")
			assert.Equal(t, res.History[0], h[0])
			assertValid(t, c, claude)
		})
	}
}

// TestFastGrowingConversationFinishes: pages of 20,000 bytes grow each request
// by more than a third of a window of 8,000 tokens. So a trim to three
// quarters of the request that overflowed would still overflow. The trim goes
// below the last request Bedrock accepted, and the one retry of each overflow
// fits.
func TestFastGrowingConversationFinishes(t *testing.T) {
	const window = 8000
	for _, tt := range []struct {
		name   string
		policy converse.ContextPolicy
	}{
		{"by usage", converse.ContextPolicy{}},
		{"with CountTokens", converse.ContextPolicy{CountTokens: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, c, _, trims := readArchive(t, window, 6, 1667, tt.policy)
			for _, tr := range trims {
				assert.True(t, tr.Overflow)
				assert.LessOrEqual(t, tr.TokensAfter, window*3/4, "trimmed below the window with room for the next turn")
			}
			var converses int
			for _, req := range srv.Requests() {
				if req.Operation != bedrocktest.OpCountTokens {
					converses++
				}
			}
			assert.Equal(t, 7+len(trims), converses, "each overflow is retried once, and the retry fits")
			assertValid(t, c, claude)
		})
	}
}

// TestOverflowInALaterSend: a Send whose prompt overflows the window has
// no request of its own yet that Bedrock accepted; the trim goes below the
// one the history's last answer replied to, from an earlier Send.
func TestOverflowInALaterSend(t *testing.T) {
	const window = 8000
	replies := make([]*bedrocktest.Reply, 7)
	for i := range replies {
		replies[i] = bedrocktest.Text(fmt.Sprint("answer ", i+1))
	}
	srv, client := serve(t, bedrocktest.Script(replies...), func(o *bedrocktest.Options) {
		o.MaxInputTokens = window
		o.Accounting = true
	})
	var trims []converse.Trimmed
	c := converse.New(client, claude, nil, func(o *converse.Options) {
		o.Context = &converse.ContextPolicy{}
		o.OnEvent = func(ev converse.Event) {
			if tr, ok := ev.(converse.Trimmed); ok {
				trims = append(trims, tr)
			}
		}
	})
	for i := range 6 {
		_, err := c.Send(context.Background(), fmt.Sprintf("note %d: %s", i+1, strings.Repeat("a", 4000)))
		require.NoError(t, err)
	}
	require.Empty(t, trims)
	res, err := c.Send(context.Background(), "the long one: "+strings.Repeat("b", 22000))
	require.NoError(t, err)
	assert.Equal(t, "answer 7", res.Text)
	require.Len(t, trims, 1)
	t.Logf("trim: %+v", trims[0])
	assert.True(t, trims[0].Overflow)
	assert.LessOrEqual(t, trims[0].TokensAfter, window)
	assert.Len(t, srv.Requests(), 8, "the overflow is retried once, and the retry fits")
	assertValid(t, c, claude)
}

// TestOverflowWithoutPolicyFails shows what the policy prevents.
func TestOverflowWithoutPolicyFails(t *testing.T) {
	_, client := serve(t, bedrocktest.Script(fetchLoop(12)...), func(o *bedrocktest.Options) { o.MaxInputTokens = 4000 })
	_, err := converse.New(client, claude, fetchTool(t, 250), func(o *converse.Options) { o.MaxTurns = 20 }).Send(context.Background(), "Read pages 1 to 12.")
	var ve *types.ValidationException
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Input is too long for requested model.", ve.ErrorMessage())
	assert.ErrorIs(t, err, converse.ErrContextWindowExceeded, "Bedrock's overflow is the window's error")
}

// TestContextWindowStopIsRetried: a turn that stops with
// model_context_window_exceeded is made again on the trimmed history.
func TestContextWindowStopIsRetried(t *testing.T) {
	replies := fetchLoop(3)
	replies = append(replies[:3:3], bedrocktest.ContextWindowExceeded(), replies[3])
	srv, client := serve(t, bedrocktest.Script(replies...))
	var trims []converse.Trimmed
	var usage converse.Usage
	var cost float64
	res, err := converse.New(client, claude, fetchTool(t, 250), func(o *converse.Options) {
		o.Context = &converse.ContextPolicy{}
		o.OnEvent = func(ev converse.Event) {
			switch ev := ev.(type) {
			case converse.Trimmed:
				trims = append(trims, ev)
			case converse.TurnEnd:
				require.NotNil(t, ev.CostUSD)
				usage, cost = usage.Add(ev.Usage), cost+*ev.CostUSD
			}
		}
	}).Send(context.Background(), "Read pages 1 to 3.")

	require.NoError(t, err)
	assert.Equal(t, "I read them all.", res.Text)
	require.Len(t, trims, 1)
	assert.True(t, trims[0].Overflow)
	assert.Len(t, srv.Requests(), 5)
	// The call that overflowed was billed: the retry's TurnEnd reports it.
	assert.Equal(t, res.Usage, usage, "the turns' usage, the overflowed call's included")
	require.NotNil(t, res.CostUSD)
	assert.InDelta(t, *res.CostUSD, cost, 1e-12, "and their cost")
}

// TestSummaryCallCarriesToolConfig: the summary of dropped tool exchanges
// is asked for with the tool configuration (which bedrocktest, as Bedrock,
// requires beside tool blocks), and joins the first kept prompt.
func TestSummaryCallCarriesToolConfig(t *testing.T) {
	script := bedrocktest.Script(fetchLoop(8)...)
	var mu sync.Mutex
	var summaries []*bedrocktest.Request
	h := bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		last := req.Messages[len(req.Messages)-1]
		if tb, ok := last.Content[len(last.Content)-1].(*types.ContentBlockMemberText); ok && strings.HasPrefix(tb.Value, "Summarize the conversation so far") {
			mu.Lock()
			summaries = append(summaries, req)
			mu.Unlock()
			return bedrocktest.Text("The user asked for the archive; pages were fetched."), nil
		}
		return script.ServeConverse(ctx, req)
	})
	_, client := serve(t, h, func(o *bedrocktest.Options) { o.Accounting = true })
	var trims []converse.Trimmed
	c := converse.New(client, claude, fetchTool(t, 250), func(o *converse.Options) {
		o.Context = &converse.ContextPolicy{MaxInputTokens: 3000, Summarize: true}
		o.OnEvent = func(ev converse.Event) {
			if tr, ok := ev.(converse.Trimmed); ok {
				trims = append(trims, tr)
			}
		}
	})
	res, err := c.Send(context.Background(), "Read pages 1 to 8.")
	require.NoError(t, err)
	assert.Equal(t, "I read them all.", res.Text)

	require.NotEmpty(t, summaries)
	for _, req := range summaries {
		assert.NotNil(t, req.ToolConfig, "the summary call holds tool blocks and must carry the toolConfig")
	}
	require.NotEmpty(t, trims)
	assert.True(t, trims[0].Summarized)
	assert.Positive(t, trims[0].Usage.OutputTokens)
	first := c.History()[0]
	assert.Equal(t, "Read pages 1 to 8.", first.Content[0].(*types.ContentBlockMemberText).Value)
	assert.Contains(t, first.Content[len(first.Content)-1].(*types.ContentBlockMemberText).Value, "pages were fetched")
	assertValid(t, c, claude)
}

// TestOverflowWithNothingToTrim: a prompt too long on its own gets
// Bedrock's error at once, without a retry of the same request.
func TestOverflowWithNothingToTrim(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("unreached")), func(o *bedrocktest.Options) { o.MaxInputTokens = 100 })
	_, err := converse.New(client, claude, nil, func(o *converse.Options) {
		o.Context = &converse.ContextPolicy{}
	}).Send(context.Background(), strings.Repeat("a long prompt ", 100))

	var ve *types.ValidationException
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Input is too long for requested model.", ve.ErrorMessage())
	assert.Len(t, srv.Requests(), 1)
}

// TestTrimKeepsTheLoopsReasoning: with extended thinking (not interleaved)
// only the reply that opened the tool loop carries reasoning, and Claude
// takes a request continuing the loop only when that reply starts with it
// (bedrocktest answers as Bedrock does). The trim drops the pairs after it,
// and the summary request of what it dropped holds it too.
func TestTrimKeepsTheLoopsReasoning(t *testing.T) {
	for _, summarize := range []bool{false, true} {
		t.Run(fmt.Sprint("summarize ", summarize), func(t *testing.T) {
			first := bedrocktest.Output(types.StopReasonToolUse,
				&types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{Value: types.ReasoningTextBlock{
					Text: aws.String("I need four pages."), Signature: aws.String("sig-plan"),
				}}},
				&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("tooluse_1"), Name: aws.String("fetch"),
					Input: documentOf(map[string]any{"page": 1})}})
			replies := fetchLoop(4)
			replies[0] = first
			script := bedrocktest.Script(replies...)
			var mu sync.Mutex
			var turns []*bedrocktest.Request
			h := bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
				last := req.Messages[len(req.Messages)-1]
				if tb, ok := last.Content[len(last.Content)-1].(*types.ContentBlockMemberText); ok && strings.HasPrefix(tb.Value, "Summarize the conversation so far") {
					return bedrocktest.Text("Page 1 was fetched."), nil
				}
				mu.Lock()
				turns = append(turns, req)
				mu.Unlock()
				return script.ServeConverse(ctx, req)
			})
			_, client := serve(t, h, func(o *bedrocktest.Options) { o.Accounting = true })
			var trims []converse.Trimmed
			c := converse.New(client, claude, fetchTool(t, 250), func(o *converse.Options) {
				o.Request.InferenceConfig = &types.InferenceConfiguration{MaxTokens: aws.Int32(4096)}
				o.Request.AdditionalModelRequestFields = documentOf(map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}})
				o.Context = &converse.ContextPolicy{MaxInputTokens: 1800, Summarize: summarize}
				o.OnEvent = func(ev converse.Event) {
					if tr, ok := ev.(converse.Trimmed); ok {
						trims = append(trims, tr)
					}
				}
			})
			res, err := c.Send(context.Background(), "Read pages 1 to 4.")
			require.NoError(t, err, "a trimmed request lost the loop's reasoning")
			assert.Equal(t, "I read them all.", res.Text)
			require.NotEmpty(t, trims)
			for _, tr := range trims {
				assert.Positive(t, tr.DroppedMessages)
				assert.Equal(t, summarize, tr.Summarized, "the summary request was taken")
			}
			require.Len(t, turns, 5)
			last := turns[len(turns)-1].Messages
			assert.Less(t, len(last), 9, "the last request is trimmed")
			require.GreaterOrEqual(t, len(last), 2)
			assert.IsType(t, &types.ContentBlockMemberReasoningContent{}, last[1].Content[0], "the loop's reasoning stays first")
		})
	}
}

// TestTrimKeepsAStructuredSendsPrompt: a structured Send's correction is a
// user text message, but no prompt to cut the history at. The trim drops the
// earlier Send's exchange, and keeps the Send's own prompt and its data before
// the correction.
func TestTrimKeepsAStructuredSendsPrompt(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(
		bedrocktest.Text("Noted."),
		bedrocktest.Text("The answer is probably forty-two, and at length: "+strings.Repeat("blah ", 300)),
		bedrocktest.Text(`{"n": 42}`),
	), func(o *bedrocktest.Options) { o.Accounting = true })
	var trims []converse.Trimmed
	c := converse.New(client, claude, nil, func(o *converse.Options) {
		o.Context = &converse.ContextPolicy{MaxInputTokens: 1500}
		o.OnEvent = func(ev converse.Event) {
			if tr, ok := ev.(converse.Trimmed); ok {
				trims = append(trims, tr)
			}
		}
	})
	_, err := c.Send(context.Background(), "Keep this note: "+strings.Repeat("note ", 300))
	require.NoError(t, err)
	const prompt = "Compute n from this data: "
	out, _, err := converse.StructuredJSON(context.Background(), c, prompt+strings.Repeat("data ", 600),
		[]byte(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"n": 42}`, string(out))
	require.NotEmpty(t, trims)
	assert.Equal(t, 2, trims[len(trims)-1].DroppedMessages, "the earlier Send's exchange, nothing of this one")
	requests := srv.Requests()
	require.Len(t, requests, 3)
	corrected := requests[2].Messages
	first := corrected[0].Content[0].(*types.ContentBlockMemberText).Value
	assert.True(t, strings.HasPrefix(first, prompt), "the request starts with %.40q, not the Send's prompt", first)
	assert.Len(t, corrected, 3, "the prompt, the rejected answer, the correction")
	assertValid(t, c, claude)
}
