package converse_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// inMemory is a transport that hands each request to a bedrocktest
// Server's handler on the caller's goroutine: no socket, so that a
// testing/synctest bubble holds the whole exchange and runs in virtual
// time.
type inMemory struct{ srv *bedrocktest.Server }

func (m inMemory) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	m.srv.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// inMemoryClient is a real client of srv over inMemory.
func inMemoryClient(srv *bedrocktest.Server, optFns ...func(*bedrockruntime.Options)) *bedrockruntime.Client {
	cfg := srv.Config()
	cfg.HTTPClient = &http.Client{Transport: inMemory{srv}}
	return bedrockruntime.NewFromConfig(cfg, optFns...)
}

// roundUsage runs threeRounds without a budget and returns each model
// call's usage, as the accounting server reports it.
func roundUsage(t *testing.T) []converse.Usage {
	t.Helper()
	srv := bedrocktest.NewServer(bedrocktest.Script(threeRounds()...), func(o *bedrocktest.Options) { o.Accounting = true })
	defer srv.Close()
	var turns []converse.Usage
	c := converse.New(srv.Client(), "anthropic.claude-3-haiku-20240307-v1:0", countingTools(t, &runCounter{}, ""), func(o *converse.Options) {
		o.OnEvent = func(ev converse.Event) {
			if te, ok := ev.(converse.TurnEnd); ok {
				turns = append(turns, te.Usage)
			}
		}
	})
	_, err := c.Send(context.Background(), "go")
	require.NoError(t, err)
	require.Len(t, turns, 4)
	return turns
}

func tokens(u converse.Usage) int {
	return u.InputTokens + u.CacheReadInputTokens + u.CacheWriteInputTokens + u.OutputTokens
}

// TestBudgetStopsAtStepBoundaryAndResumes runs threeRounds under each
// limit, set so that it is reached before the third model call or the
// second tool round: the Send ends with a *BudgetError naming the limit,
// its history valid and resumable, no request's maxTokens past what was
// left, and the spend within the limit; a Restore of its State with a
// raised limit resumes it to the answer, each tool call run once.
func TestBudgetStopsAtStepBoundaryAndResumes(t *testing.T) {
	turns := roundUsage(t)
	two := turns[0].Add(turns[1])
	// The third call's input, estimated as the accounting server counts
	// it, does not fit in half of it.
	input2, total2 := two.InputTokens, tokens(two)
	half3 := turns[2].InputTokens / 2
	dollars := &converse.Prices{Input: 1, Output: 1, CacheRead: 1, CacheWrite: 1} // a dollar a million tokens
	cases := []struct {
		name   string
		budget converse.Budget
		limit  string
		conv   bool
		ran    int // tool calls run when it stops
	}{
		{"send input tokens", converse.Budget{Send: converse.Limits{InputTokens: input2 + half3}}, "input tokens", false, 3},
		{"send output tokens", converse.Budget{Send: converse.Limits{OutputTokens: two.OutputTokens}}, "output tokens", false, 3},
		{"send total tokens", converse.Budget{Send: converse.Limits{TotalTokens: total2 + half3}}, "total tokens", false, 3},
		{"send cost", converse.Budget{Send: converse.Limits{CostUSD: float64(total2+half3) / 1e6}}, "cost", false, 3},
		{"conversation total tokens", converse.Budget{Conversation: converse.Limits{TotalTokens: total2 + half3}}, "total tokens", true, 3},
		{"send tool calls", converse.Budget{Send: converse.Limits{ToolCalls: 2}}, "tool calls", false, 1},
		{"conversation tool calls", converse.Budget{Conversation: converse.Limits{ToolCalls: 3}}, "tool calls", true, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := bedrocktest.NewServer(bedrocktest.Script(threeRounds()...), func(o *bedrocktest.Options) { o.Accounting = true })
			defer srv.Close()
			runs := &runCounter{}
			reg := countingTools(t, runs, "")
			var spent converse.Usage
			opts := func(b converse.Budget) func(*converse.Options) {
				return func(o *converse.Options) {
					o.Budget, o.Prices = &b, dollars
					o.OnEvent = func(ev converse.Event) {
						if te, ok := ev.(converse.TurnEnd); ok {
							spent = spent.Add(te.Usage)
						}
					}
				}
			}
			c := converse.New(srv.Client(), "anthropic.claude-3-haiku-20240307-v1:0", reg, opts(tc.budget))
			_, err := c.Send(context.Background(), "go")
			require.ErrorIs(t, err, converse.ErrBudget)
			var be *converse.BudgetError
			require.ErrorAs(t, err, &be)
			assert.Equal(t, tc.limit, be.Limit)
			assert.Equal(t, tc.conv, be.Conversation)
			assert.Contains(t, err.Error(), tc.limit+" limit")
			assert.Len(t, runs.snapshot(), tc.ran, "calls run: %v", runs.snapshot())
			checkState(t, c.State(), reg)

			// No call could pass the limit: each maxTokens fits in what
			// was left, and the spend is within it.
			lim := tc.budget.Send
			if tc.conv {
				lim = tc.budget.Conversation
			}
			if lim.TotalTokens > 0 {
				assert.LessOrEqual(t, tokens(spent), lim.TotalTokens)
			}
			if lim.OutputTokens > 0 {
				var left int32 = int32(lim.OutputTokens)
				for _, r := range srv.Requests() {
					require.NotNil(t, r.InferenceConfig)
					assert.LessOrEqual(t, *r.InferenceConfig.MaxTokens, left)
					left -= 5 // each scripted reply's output
				}
			}

			raised := converse.Budget{Send: converse.Limits{TotalTokens: 1 << 20, ToolCalls: 10}}
			again, err := converse.Restore(srv.Client(), reg, c.State(), opts(raised))
			require.NoError(t, err)
			res, err := again.Resume(context.Background())
			require.NoError(t, err)
			assert.Equal(t, "done", res.Text)
			for id, n := range runs.snapshot() {
				assert.Equal(t, 1, n, "runs of %s", id)
			}
			assert.Len(t, runs.snapshot(), 4)
		})
	}
}

// TestBudgetWallTime: a Send whose first tool round outlasts its wall
// time stops before the next model call, in virtual time, and resumes.
func TestBudgetWallTime(t *testing.T) {
	srv := bedrocktest.NewServer(bedrocktest.Script(threeRounds()...))
	defer srv.Close()
	synctest.Test(t, func(t *testing.T) {
		slow, err := tools.New("step", "Does a slow step.", func(ctx context.Context, in stepIn) (int, error) {
			time.Sleep(2 * time.Second)
			return in.N, nil
		})
		require.NoError(t, err)
		reg, err := tools.NewRegistry(slow)
		require.NoError(t, err)
		client := inMemoryClient(srv)
		c := converse.New(client, "anthropic.claude-3-haiku-20240307-v1:0", reg, func(o *converse.Options) {
			o.Budget = &converse.Budget{WallTime: 3 * time.Second}
		})
		_, err = c.Send(context.Background(), "go")
		var be *converse.BudgetError
		require.ErrorAs(t, err, &be)
		assert.Equal(t, "wall time", be.Limit)
		assert.Equal(t, 4*time.Second, be.Spent.WallTime, "two rounds of 2s: the third model call is not made")
		assert.Len(t, srv.Requests(), 2)
		checkState(t, c.State(), reg)
		res, err := c.Resume(context.Background())
		require.NoError(t, err, "a new Resume has a wall time of its own")
		assert.Equal(t, "done", res.Text)
	})
}

// TestBudgetCapsMaxTokensOnACopy: the cap applies to the request only; the
// caller's inference configuration keeps its value.
func TestBudgetCapsMaxTokensOnACopy(t *testing.T) {
	srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("hi")))
	defer srv.Close()
	ic := &types.InferenceConfiguration{MaxTokens: aws.Int32(4000)}
	c := converse.New(srv.Client(), "anthropic.claude-3-haiku-20240307-v1:0", nil, func(o *converse.Options) {
		o.Request.InferenceConfig = ic
		o.Budget = &converse.Budget{Send: converse.Limits{OutputTokens: 100}}
	})
	_, err := c.Send(context.Background(), "hello")
	require.NoError(t, err)
	assert.Equal(t, int32(100), *srv.Requests()[0].InferenceConfig.MaxTokens)
	assert.Equal(t, int32(4000), *ic.MaxTokens)
}

// TestBudgetCostNeedsPrices: a cost limit on a model the price table
// lacks, without Options.Prices, fails before any model call.
func TestBudgetCostNeedsPrices(t *testing.T) {
	srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("hi")))
	defer srv.Close()
	c := converse.New(srv.Client(), "meta.llama3-70b-instruct-v1:0", nil, func(o *converse.Options) {
		o.Budget = &converse.Budget{Send: converse.Limits{CostUSD: 1}}
	})
	_, err := c.Send(context.Background(), "hello")
	require.Error(t, err)
	assert.False(t, errors.Is(err, converse.ErrBudget))
	assert.Contains(t, err.Error(), "set Options.Prices")
	assert.Empty(t, srv.Requests())
}

// TestBudgetErrorText: a limit refused before anything was spent says so,
// not "spent 0"; one reached after says what was spent.
func TestBudgetErrorText(t *testing.T) {
	before := &converse.BudgetError{Limit: "total tokens", Max: 20, Needed: 31}
	assert.Equal(t, "budget reached: send total tokens limit 20 tokens reached before anything was spent: the first step needs 31 tokens", before.Error())
	after := &converse.BudgetError{Limit: "cost", Conversation: true, Max: 0.01, Spent: converse.Spent{CostUSD: 0.02}}
	assert.Equal(t, "budget reached: conversation cost limit $0.0100 reached: spent $0.0200", after.Error())
}
