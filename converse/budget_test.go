package converse_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/converse/internal/inmemory"
	"github.com/tooluse/bedrock/converse/internal/testimage"
	"github.com/tooluse/bedrock/converse/modelinfo"
	"github.com/tooluse/bedrock/tools"
)

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

// TestBudgetStopsAtStepBoundaryAndResumes runs threeRounds under each limit,
// set so that it is reached before the third model call or the second tool
// round. The Send ends with a *BudgetError naming the limit. Its history is
// valid and resumable, no request's maxTokens is past what was left, and the
// spend is within the limit. A Restore of its State with a raised limit
// resumes it to the answer, each tool call run at most once. A tool-call limit
// stops the round's calls: they are answered as not run, and never run.
func TestBudgetStopsAtStepBoundaryAndResumes(t *testing.T) {
	turns := roundUsage(t)
	two := turns[0].Add(turns[1])
	// The third call's input, estimated as the accounting server counts
	// it, does not fit in half of it.
	input2, total2 := two.InputTokens, tokens(two)
	half3 := turns[2].InputTokens / 2
	dollars := &modelinfo.Prices{Input: 1, Output: 1, CacheRead: 1, CacheWrite: 1} // a dollar a million tokens
	cases := []struct {
		name   string
		budget converse.Budget
		limit  string
		conv   bool
		ran    int // tool calls run when it stops
		never  int // calls the stop answered as not run (of the last round)
	}{
		{"send input tokens", converse.Budget{Send: converse.Limits{InputTokens: input2 + half3}}, "input tokens", false, 3, 0},
		{"send output tokens", converse.Budget{Send: converse.Limits{OutputTokens: two.OutputTokens}}, "output tokens", false, 3, 0},
		{"send total tokens", converse.Budget{Send: converse.Limits{TotalTokens: total2 + half3}}, "total tokens", false, 3, 0},
		{"send cost", converse.Budget{Send: converse.Limits{CostUSD: float64(total2+half3) / 1e6}}, "cost", false, 3, 0},
		{"conversation total tokens", converse.Budget{Conversation: converse.Limits{TotalTokens: total2 + half3}}, "total tokens", true, 3, 0},
		{"send tool calls", converse.Budget{Send: converse.Limits{ToolCalls: 2}}, "tool calls", false, 1, 2},
		{"conversation tool calls", converse.Budget{Conversation: converse.Limits{ToolCalls: 3}}, "tool calls", true, 3, 1},
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
			h := c.History()
			if tc.never > 0 {
				stopped := resultsOf(t, h[len(h)-1])
				require.Len(t, stopped, tc.never)
				for _, r := range stopped {
					assert.Equal(t, types.ToolResultStatusError, r.Status)
					assert.Contains(t, r.Text, "the call was not run: the task was stopped (budget reached")
				}
			}

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
			assert.Len(t, runs.snapshot(), 4-tc.never)
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
		client := inmemory.Client(srv)
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

// TestBudgetLeavesThinkingItsBudget: with extended thinking on a budget,
// Bedrock rejects a maxTokens at or under budget_tokens. So a limit that
// leaves no more than that ends the Send with a *BudgetError naming what the
// call needs, before any request. One that leaves more caps maxTokens above
// the thinking budget. Interleaved thinking, whose budget may pass maxTokens,
// is capped as any call.
func TestBudgetLeavesThinkingItsBudget(t *testing.T) {
	tests := []struct {
		name       string
		limits     converse.Limits
		beta       bool
		wantMax    int32 // the maxTokens sent; 0 for none
		wantLimit  string
		wantNeeded float64
	}{
		{name: "output limit under the budget", limits: converse.Limits{OutputTokens: 3000}, wantLimit: "output tokens", wantNeeded: 4001},
		{name: "output limit at the budget", limits: converse.Limits{OutputTokens: 4000}, wantLimit: "output tokens", wantNeeded: 4001},
		{name: "output limit over the budget", limits: converse.Limits{OutputTokens: 6000}, wantMax: 6000},
		{name: "total limit under the budget", limits: converse.Limits{TotalTokens: 3000}, wantLimit: "total tokens"},
		{name: "cost limit under the budget", limits: converse.Limits{CostUSD: 0.03}, wantLimit: "cost"},
		{name: "interleaved", limits: converse.Limits{OutputTokens: 3000}, beta: true, wantMax: 3000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("hi")))
			defer srv.Close()
			fields := map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 4000}}
			if tt.beta {
				fields["anthropic_beta"] = []any{"interleaved-thinking-2025-05-14"}
			}
			c := converse.New(srv.Client(), "us.anthropic.claude-sonnet-4-20250514-v1:0", nil, func(o *converse.Options) {
				o.Request.InferenceConfig = &types.InferenceConfiguration{MaxTokens: aws.Int32(8000)}
				o.Request.AdditionalModelRequestFields = document.NewLazyDocument(fields)
				o.Budget = &converse.Budget{Send: tt.limits}
			})
			_, err := c.Send(context.Background(), "hello")
			if tt.wantLimit == "" {
				require.NoError(t, err)
				require.Len(t, srv.Requests(), 1)
				assert.Equal(t, tt.wantMax, *srv.Requests()[0].InferenceConfig.MaxTokens)
				return
			}
			var be *converse.BudgetError
			require.ErrorAs(t, err, &be, "not a request Bedrock rejects")
			assert.Equal(t, tt.wantLimit, be.Limit)
			if tt.wantNeeded > 0 {
				assert.Equal(t, tt.wantNeeded, be.Needed)
			}
			assert.Empty(t, srv.Requests())
		})
	}
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

// overflowed is a reply that ran out of the context window, as Bedrock
// bills it: 100 tokens in, 900 out.
func overflowed() *bedrocktest.Reply {
	return withUsage(bedrocktest.Output(types.StopReasonModelContextWindowExceeded, text("partial")),
		types.TokenUsage{InputTokens: aws.Int32(100), OutputTokens: aws.Int32(900), TotalTokens: aws.Int32(1000)})
}

// TestBudgetCountsTheOverflowedCall: a call that overflowed the context window
// was billed. Its usage is counted when it returns, once. The trimmed retry is
// budgeted with it. A retry that fails keeps it in the conversation's usage.
// The turns after the retry do not count it again. The retry's TurnEnd reports
// both calls.
func TestBudgetCountsTheOverflowedCall(t *testing.T) {
	long := strings.Repeat("a", 4000)
	small := func(r *bedrocktest.Reply) *bedrocktest.Reply {
		return withUsage(r, types.TokenUsage{InputTokens: aws.Int32(100), OutputTokens: aws.Int32(5), TotalTokens: aws.Int32(105)})
	}
	tests := []struct {
		name       string
		second     []*bedrocktest.Reply // the second Send's replies, after the overflow
		limit      int                  // Budget.Send.OutputTokens; 0 for none
		wantErr    bool
		wantOutput int   // the conversation's output tokens after the second Send
		wantMax    int32 // the retry's maxTokens, 0 to not check
		wantTurn   int   // the output tokens of the retry's TurnEnd, 0 to not check
	}{
		{name: "retried, then a tool round", second: []*bedrocktest.Reply{
			small(bedrocktest.ToolUse("", bedrocktest.Call{ID: "c1", Name: "calculator", Input: map[string]any{"a": 1, "b": 2}})),
			small(bedrocktest.Text("3.")),
		}, wantOutput: 5 + 900 + 5 + 5, wantTurn: 905},
		{name: "budgeted with it", second: []*bedrocktest.Reply{small(bedrocktest.Text("done"))},
			limit: 1000, wantOutput: 5 + 900 + 5, wantMax: 1000 - 5 - 900},
		{name: "the retry fails", second: nil, wantErr: true, wantOutput: 5 + 900},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replies := append([]*bedrocktest.Reply{small(bedrocktest.Text("first")), overflowed()}, tt.second...)
			srv := bedrocktest.NewServer(bedrocktest.Script(replies...))
			defer srv.Close()
			var turnEnds []converse.TurnEnd
			c := converse.New(srv.Client(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", calculator(t), func(o *converse.Options) {
				o.Request.InferenceConfig = &types.InferenceConfiguration{MaxTokens: aws.Int32(4000)}
				o.Context = &converse.ContextPolicy{}
				if tt.limit > 0 {
					o.Budget = &converse.Budget{Conversation: converse.Limits{OutputTokens: tt.limit}}
				}
				o.OnEvent = func(ev converse.Event) {
					if te, ok := ev.(converse.TurnEnd); ok {
						turnEnds = append(turnEnds, te)
					}
				}
			})
			_, err := c.Send(context.Background(), "first "+long)
			require.NoError(t, err)
			res, err := c.Send(context.Background(), "hello")
			if tt.wantErr {
				require.Error(t, err, "the script has no reply for the retry")
			} else {
				require.NoError(t, err)
				assert.Equal(t, tt.wantOutput-5, res.Usage.OutputTokens, "the second Send's usage")
			}
			assert.Equal(t, tt.wantOutput, c.State().Usage.OutputTokens, "the conversation's usage")
			reqs := srv.Requests()
			if tt.wantMax > 0 {
				require.Len(t, reqs, 3)
				assert.Equal(t, tt.wantMax, *reqs[2].InferenceConfig.MaxTokens, "the retry is budgeted with the overflowed call's 900")
			}
			if tt.wantTurn > 0 {
				require.GreaterOrEqual(t, len(turnEnds), 2)
				assert.Equal(t, tt.wantTurn, turnEnds[1].Usage.OutputTokens, "the retry's TurnEnd has both calls")
			}
		})
	}
}

// TestBudgetCountsAnImageAsTheModelReadsIt: an image of some megabyte
// is some hundreds of tokens to the model, not its base64 over four
// (about 330,000), so an input limit of 100,000 takes it.
func TestBudgetCountsAnImageAsTheModelReadsIt(t *testing.T) {
	img := testimage.Noise(t, 500, 500)
	require.Greater(t, len(img), 900_000)
	srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("Noise.")))
	defer srv.Close()
	c := converse.New(srv.Client(), "us.anthropic.claude-sonnet-4-20250514-v1:0", nil, func(o *converse.Options) {
		o.Budget = &converse.Budget{Send: converse.Limits{InputTokens: 100_000}}
	})
	_, err := c.SendMessage(context.Background(), types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{
		&types.ContentBlockMemberText{Value: "What is this?"},
		&types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatPng, Source: &types.ImageSourceMemberBytes{Value: img}}},
	}})
	require.NoError(t, err)
	assert.Len(t, srv.Requests(), 1)
}

// TestBudgetToolCallsSurviveRestore: a conversation's tool calls count across
// Restore, from a State's JSON form and from a filestore.Store's session log,
// as its usage does. A service that restores a conversation for each request
// still stops at Budget.Conversation's ToolCalls.
func TestBudgetToolCallsSurviveRestore(t *testing.T) {
	for _, via := range []string{"json", "filestore"} {
		t.Run(via, func(t *testing.T) {
			srv := bedrocktest.NewServer(bedrocktest.Script(threeRounds()...))
			defer srv.Close()
			runs := &runCounter{}
			reg := countingTools(t, runs, "")
			store := filestore.Store{Dir: t.TempDir()}
			opts := func(b converse.Budget) func(*converse.Options) {
				return func(o *converse.Options) {
					o.Budget = &b
					if via == "filestore" {
						o.Session = &converse.Session{Store: store, ID: "s"}
					}
				}
			}
			// The first Send runs round one's call and stops at round two's two.
			c := converse.New(srv.Client(), "anthropic.claude-3-haiku-20240307-v1:0", reg, opts(converse.Budget{Send: converse.Limits{ToolCalls: 1}}))
			_, err := c.Send(context.Background(), "go")
			var be *converse.BudgetError
			require.ErrorAs(t, err, &be)
			require.False(t, be.Conversation)
			require.Equal(t, 1, c.State().ToolCalls)

			var st *converse.State
			if via == "json" {
				b, err := json.Marshal(c.State())
				require.NoError(t, err)
				assert.Contains(t, string(b), `"toolCalls":1`)
				st = &converse.State{}
				require.NoError(t, json.Unmarshal(b, st))
			} else {
				st, err = store.Load(context.Background(), "s")
				require.NoError(t, err)
			}
			assert.Equal(t, 1, st.ToolCalls)

			// Round two's calls were stopped, not run. Restored under a
			// conversation limit of one, round three's call does not fit
			// beside round one's: the count came through.
			assert.True(t, st.Stopped)
			again, err := converse.Restore(srv.Client(), reg, st, opts(converse.Budget{Conversation: converse.Limits{ToolCalls: 1}}))
			require.NoError(t, err)
			_, err = again.Resume(context.Background())
			require.ErrorAs(t, err, &be)
			assert.True(t, be.Conversation)
			assert.Equal(t, "tool calls", be.Limit)
			assert.Equal(t, 1, be.Spent.ToolCalls)
			assert.Equal(t, 1, again.State().ToolCalls)
			assert.Len(t, runs.snapshot(), 1)
			if via == "filestore" {
				st, err = store.Load(context.Background(), "s")
				require.NoError(t, err)
				assert.Equal(t, 1, st.ToolCalls, "the session log's last step keeps the count")
				assert.True(t, st.Stopped, "the session log's last step keeps the stop")
			}
		})
	}
}
