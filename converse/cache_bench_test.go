package converse_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// Bedrock's prices of cached input for Claude, relative to the model's input
// price (Amazon Bedrock pricing; the user guide "Prompt caching"). A token
// read from the cache costs a tenth. One written to it (5-minute TTL) costs a
// quarter more.
const (
	cacheReadPrice  = 0.1
	cacheWritePrice = 1.25
)

// cachedConversation runs the benchmark conversation: 20 turns of tool
// calls (19 calls and the answer) with a 4,000-token system prompt and 10
// tools, through bedrocktest's accounting, and returns each turn's usage.
func cachedConversation(tb testing.TB, cache bool) []converse.Usage {
	tb.Helper()
	srv := bedrocktest.NewServer(toolLoop(20), func(o *bedrocktest.Options) { o.Accounting = true })
	defer srv.Close()
	var turns []converse.Usage
	c := converse.New(srv.Client(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", lookupTools(tb, 10), func(o *converse.Options) {
		o.Request.System = systemPrompt(4000)
		o.MaxTurns = 20
		if cache {
			o.Cache = &converse.CachePolicy{}
		}
		o.OnEvent = func(ev converse.Event) {
			if te, ok := ev.(converse.TurnEnd); ok {
				turns = append(turns, te.Usage)
			}
		}
	})
	res, err := c.Send(context.Background(), "Find the records about the harbour.")
	require.NoError(tb, err)
	require.Equal(tb, 20, res.Turns)
	return turns
}

// cacheFigures sums a conversation's usage: all the input tokens, those
// billed (cache reads and writes at their price ratios), and the share of
// cache reads in the input from the second turn on.
func cacheFigures(turns []converse.Usage) (input, billed, readShare float64) {
	var later, laterRead float64
	for i, u := range turns {
		in := float64(u.InputTokens + u.CacheReadInputTokens + u.CacheWriteInputTokens)
		input += in
		billed += float64(u.InputTokens) + cacheReadPrice*float64(u.CacheReadInputTokens) + cacheWritePrice*float64(u.CacheWriteInputTokens)
		if i > 0 {
			later += in
			laterRead += float64(u.CacheReadInputTokens)
		}
	}
	return input, billed, laterRead / later
}

// TestPromptCacheSavings checks the target of issue 15: from the second
// turn on, at least 85% of the input tokens are read from the cache.
func TestPromptCacheSavings(t *testing.T) {
	input, billed, share := cacheFigures(cachedConversation(t, true))
	plainInput, plainBilled, plainShare := cacheFigures(cachedConversation(t, false))
	t.Logf("cached: %.0f input tokens, billed as %.0f, %.1f%% read from turn 2 on", input, billed, 100*share)
	t.Logf("plain:  %.0f input tokens, billed as %.0f", plainInput, plainBilled)
	require.GreaterOrEqual(t, share, 0.85)
	require.Zero(t, plainShare)
	require.Less(t, billed, plainBilled/4)
}

// BenchmarkPromptCache reports the input tokens of the benchmark
// conversation and what they are billed as, with and without Options.Cache.
func BenchmarkPromptCache(b *testing.B) {
	for _, bc := range []struct {
		name  string
		cache bool
	}{{"cache=off", false}, {"cache=on", true}} {
		b.Run(bc.name, func(b *testing.B) {
			var input, billed, share float64
			for b.Loop() {
				input, billed, share = cacheFigures(cachedConversation(b, bc.cache))
			}
			b.ReportMetric(input, "input-tokens/conv")
			b.ReportMetric(billed, "billed-tokens/conv")
			b.ReportMetric(100*share, "%read-from-turn-2")
		})
	}
}
