package converse_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/modelinfo"
)

// withUsage is r with the usage u.
func withUsage(r *bedrocktest.Reply, u types.TokenUsage) *bedrocktest.Reply {
	r.Output.Usage = &u
	return r
}

// TestCostOfACachedConversation: the cost of a two-turn conversation that
// writes and reads the prompt cache is the hand computation from the price
// table. The prices are Claude Sonnet 4's: $3 input, $15 output, $0.30 cache
// read, $3.75 cache write a million tokens. The invoke_agent span has the
// cost. Options.Prices replaces the table. A model the table lacks has no
// cost.
func TestCostOfACachedConversation(t *testing.T) {
	script := func() bedrocktest.Handler {
		return bedrocktest.Script(
			withUsage(bedrocktest.ToolUse("", bedrocktest.Call{ID: "s1", Name: "step", Input: map[string]any{"n": 1}}),
				types.TokenUsage{InputTokens: aws.Int32(100), OutputTokens: aws.Int32(50), CacheWriteInputTokens: aws.Int32(3000), CacheReadInputTokens: aws.Int32(0)}),
			withUsage(bedrocktest.Text("done"),
				types.TokenUsage{InputTokens: aws.Int32(120), OutputTokens: aws.Int32(30), CacheReadInputTokens: aws.Int32(3000), CacheWriteInputTokens: aws.Int32(200)}),
		)
	}
	// 220 input, 80 output, 3,000 read, 3,200 written.
	hand := (220*3 + 80*15 + 3000*0.30 + 3200*3.75) / 1e6
	cases := []struct {
		name   string
		model  string
		prices *modelinfo.Prices
		want   *float64
	}{
		{"price table", "us.anthropic.claude-sonnet-4-20250514-v1:0", nil, aws.Float64(hand)},
		{"own prices", "us.anthropic.claude-sonnet-4-20250514-v1:0", &modelinfo.Prices{Input: 1, Output: 1, CacheRead: 1, CacheWrite: 1}, aws.Float64((220 + 80 + 3000 + 3200) / 1e6)},
		{"unknown model", "meta.llama3-70b-instruct-v1:0", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := bedrocktest.NewServer(script(), func(o *bedrocktest.Options) { o.Lenient = true })
			defer srv.Close()
			tr := newTraced(t)
			var ends []converse.TurnEnd
			c := converse.New(srv.Client(), tc.model, countingTools(t, &runCounter{}, ""), tr.options, func(o *converse.Options) {
				o.Prices = tc.prices
				o.OnEvent = func(ev converse.Event) {
					if end, ok := ev.(converse.TurnEnd); ok {
						ends = append(ends, end)
					}
				}
			})
			res, err := c.Send(context.Background(), "go")
			require.NoError(t, err)
			v, recorded := attrs(tr.one(t, "invoke_agent"))["tooluse.converse.cost_usd"]
			require.Len(t, ends, 2)
			if tc.want == nil {
				assert.Nil(t, res.CostUSD)
				assert.False(t, recorded)
				assert.Nil(t, ends[0].CostUSD, "the turns' cost is unknown too")
				return
			}
			require.NotNil(t, res.CostUSD)
			assert.InDelta(t, *tc.want, *res.CostUSD, 1e-12)
			assert.InDelta(t, *tc.want, v.AsFloat64(), 1e-12)
			require.NotNil(t, ends[0].CostUSD)
			require.NotNil(t, ends[1].CostUSD)
			assert.InDelta(t, *tc.want, *ends[0].CostUSD+*ends[1].CostUSD, 1e-12, "the turns' costs sum to the Result's")
		})
	}
}

// TestCostOfOneHourCacheWrites: the cache writes Bedrock lists with the
// one-hour TTL (cacheDetails) cost twice the input price on Claude, the
// rest the five-minute price; Prices without a one-hour price price them
// as five-minute writes.
func TestCostOfOneHourCacheWrites(t *testing.T) {
	reply := withUsage(bedrocktest.Text("done"), types.TokenUsage{InputTokens: aws.Int32(100), OutputTokens: aws.Int32(10),
		CacheWriteInputTokens: aws.Int32(3000), CacheDetails: []types.CacheDetail{
			{Ttl: types.CacheTTLOneHour, InputTokens: aws.Int32(2000)},
			{Ttl: types.CacheTTLFiveMinutes, InputTokens: aws.Int32(1000)},
		}})
	for _, tc := range []struct {
		name   string
		prices *modelinfo.Prices
		want   float64
	}{
		{"price table", nil, (100*3 + 10*15 + 1000*3.75 + 2000*6) / 1e6},
		{"own prices without an hour's", &modelinfo.Prices{Input: 1, Output: 1, CacheWrite: 2}, (100 + 10 + 3000*2) / 1e6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, client := serve(t, bedrocktest.Script(reply))
			res, err := converse.New(client, "global.anthropic.claude-sonnet-4-5-20250929-v1:0", nil,
				func(o *converse.Options) { o.Prices = tc.prices }).Send(context.Background(), "go")

			require.NoError(t, err)
			assert.Equal(t, 2000, res.Usage.CacheWrite1hInputTokens)
			require.NotNil(t, res.CostUSD)
			assert.InDelta(t, tc.want, *res.CostUSD, 1e-12)
		})
	}
}
