package converse_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// TestResumeRunsResumableCallAgain: a call cut off by a crash is run again,
// with its ID, when its tool is resumable; another is answered as cut off.
func TestResumeRunsResumableCallAgain(t *testing.T) {
	var ran []string
	mk := func(name string, resumable bool) *tools.Tool {
		tool, err := tools.New(name, "Works.", func(ctx context.Context, _ struct{}) (string, error) {
			ran = append(ran, name+" "+tools.CallID(ctx))
			return "went on", nil
		}, func(o *tools.Options) { o.Resumable = resumable })
		require.NoError(t, err)
		return tool
	}
	reg, err := tools.NewRegistry(mk("agent", true), mk("plain", false))
	require.NoError(t, err)
	var st converse.State
	require.NoError(t, json.Unmarshal([]byte(`{"version": 1, "modelId": "`+claude+`", "messages": [
		{"role": "user", "content": [{"text": "go"}]},
		{"role": "assistant", "content": [{"toolUse": {"toolUseId": "a1", "name": "agent", "input": {}}},
			{"toolUse": {"toolUseId": "p1", "name": "plain", "input": {}}}]}],
		"openTurn": {"results": [], "answered": [], "pending": [], "started": true}}`), &st))
	srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("done")))
	t.Cleanup(srv.Close)
	c, err := converse.Restore(srv.Client(), reg, &st)
	require.NoError(t, err)
	res, err := c.Resume(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"agent a1"}, ran, "the resumable call runs again, with its ID; the other does not")
	got := map[string]types.ToolResultStatus{}
	for _, r := range resultsOf(t, res.History[2]) {
		got[r.ID] = r.Status
	}
	assert.Equal(t, map[string]types.ToolResultStatus{"a1": types.ToolResultStatusSuccess, "p1": types.ToolResultStatusError}, got)
}

// TestCallerBudget: a tool call's nested budget is the least of what the
// caller's Send and Conversation limits leave, less what the round's calls
// reported; a limit with nothing left is a *BudgetError.
func TestCallerBudget(t *testing.T) {
	tests := []struct {
		name   string
		budget converse.Budget
		want   []int // the output tokens left, before and after a report of 3
		limit  string
	}{
		{"send", converse.Budget{Send: converse.Limits{OutputTokens: 20}}, []int{15, 12}, ""},
		{"tighter conversation", converse.Budget{Send: converse.Limits{OutputTokens: 100}, Conversation: converse.Limits{OutputTokens: 9}}, []int{4, 1}, ""},
		{"none left", converse.Budget{Conversation: converse.Limits{OutputTokens: 5, InputTokens: 1000}}, nil, "output tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			var gotErr error
			tool, err := tools.New("nested", "Calls a model.", func(ctx context.Context, _ struct{}) (string, error) {
				for range 2 {
					left, err := converse.CallerOf(ctx).Budget()
					if err != nil {
						gotErr = err
						return "", err
					}
					got = append(got, left.Send.OutputTokens)
					converse.CallerOf(ctx).ReportUsage(converse.Usage{OutputTokens: 3}, nil)
				}
				return "ok", nil
			})
			require.NoError(t, err)
			reg, err := tools.NewRegistry(tool)
			require.NoError(t, err)
			srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.ToolUse("", bedrocktest.Call{ID: "n1", Name: "nested"}), bedrocktest.Text("done")))
			t.Cleanup(srv.Close)
			_, _ = converse.New(srv.Client(), claude, reg, func(o *converse.Options) { o.Budget = &tt.budget }).Send(context.Background(), "go")
			assert.Equal(t, tt.want, got)
			var be *converse.BudgetError
			if tt.limit == "" {
				assert.NoError(t, gotErr)
			} else if assert.ErrorAs(t, gotErr, &be) {
				assert.Equal(t, tt.limit, be.Limit)
				assert.True(t, be.Conversation)
			}
		})
	}
}

// TestCallerBudgetOutsideRound: outside a conversation's tool round there is
// no caller: no budget, no session, and a report counts nowhere.
func TestCallerBudgetOutsideRound(t *testing.T) {
	ctx := context.Background()
	converse.CallerOf(ctx).ReportUsage(converse.Usage{InputTokens: 1}, nil)
	b, err := converse.CallerOf(ctx).Budget()
	assert.Nil(t, b)
	assert.NoError(t, err)
	assert.Nil(t, converse.CallerOf(ctx).Session())
}
