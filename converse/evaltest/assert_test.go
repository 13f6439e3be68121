package evaltest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/evaltest"
)

// trajectory is a history of two turns of calls: search, then fetch
// (failed) and search again, then the answer.
func trajectory() *evaltest.Trajectory {
	use := func(id, name string, in map[string]any) types.ContentBlock {
		return &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String(id), Name: aws.String(name), Input: document.NewLazyDocument(in)}}
	}
	result := func(id, text string, status types.ToolResultStatus) types.ContentBlock {
		return &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String(id), Status: status,
			Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: text}}}}
	}
	msgs := []types.Message{
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Find the paper."}}},
		{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{use("t1", "search", map[string]any{"q": "paper", "limit": 5})}},
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{result("t1", `["u1"]`, types.ToolResultStatusSuccess)}},
		{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{
			use("t2", "fetch", map[string]any{"url": "u1"}), use("t3", "search", map[string]any{"q": "paper pdf"})}},
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{
			result("t2", "Error: 404", types.ToolResultStatusError), result("t3", `[]`, types.ToolResultStatusSuccess)}},
		{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: `{"title": "Attention", "year": 2017}`}}},
	}
	return evaltest.FromState(&converse.State{ModelID: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", Messages: msgs,
		Usage: converse.Usage{InputTokens: 900, OutputTokens: 100, TotalTokens: 1000}})
}

// TestAssertions: each assertion passes on a trajectory that meets it and
// fails, showing the trajectory, on one that does not.
func TestAssertions(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","required":["title","year"],"properties":{"year":{"type":"integer"}}}`)
	tests := []struct {
		pass, fail evaltest.Assertion
	}{
		{evaltest.Used("fetch"), evaltest.Used("delete")},
		{evaltest.NotUsed("delete"), evaltest.NotUsed("fetch")},
		{evaltest.Sequence(evaltest.Exact, "search", "fetch", "search"), evaltest.Sequence(evaltest.Exact, "search", "fetch")},
		{evaltest.Sequence(evaltest.InOrder, "search", "fetch"), evaltest.Sequence(evaltest.InOrder, "fetch", "fetch")},
		{evaltest.Sequence(evaltest.AnyOrder, "fetch", "search", "search"), evaltest.Sequence(evaltest.AnyOrder, "fetch", "search")},
		{evaltest.Sequence(evaltest.Subset, "fetch"), evaltest.Sequence(evaltest.Subset, "fetch", "delete")},
		{evaltest.Sequence(evaltest.Superset, "search", "fetch", "delete"), evaltest.Sequence(evaltest.Superset, "search")},
		{evaltest.Args("search", map[string]any{"q": "paper"}), evaltest.Args("search", map[string]any{"q": "paper", "limit": 6})},
		{evaltest.ArgsExact("fetch", map[string]any{"url": "u1"}), evaltest.ArgsExact("search", map[string]any{"q": "paper"})},
		{evaltest.ArgsFunc("fetch", "names a URL", func(in json.RawMessage) bool { return json.Valid(in) }),
			evaltest.ArgsFunc("fetch", "is empty", func(in json.RawMessage) bool { return string(in) == "{}" })},
		{evaltest.Calls("search", 2, 2), evaltest.Calls("search", 0, 1)},
		{evaltest.Turns(3, 3), evaltest.Turns(1, 2)},
		{evaltest.Tokens(1000), evaltest.Tokens(999)},
		{evaltest.Cost(1), evaltest.Cost(0.001)},
		{evaltest.AnswerContains("Attention"), evaltest.AnswerContains("Transformers")},
		{evaltest.AnswerEquals(`{"title": "Attention", "year": 2017}`), evaltest.AnswerEquals("Attention")},
		{evaltest.AnswerMatches(`"year": \d{4}`), evaltest.AnswerMatches(`^Attention`)},
		{evaltest.AnswerSchema(schema), evaltest.AnswerSchema(json.RawMessage(`{"type":"object","required":["doi"]}`))},
	}
	tr := trajectory()
	for _, tt := range tests {
		t.Run(tt.pass.Name, func(t *testing.T) {
			assert.NoError(t, tt.pass.Check(t.Context(), tr))
			err := tt.fail.Check(t.Context(), tr)
			require.ErrorIs(t, err, evaltest.ErrFailed, tt.fail.Name)
			var f *evaltest.Failure
			require.ErrorAs(t, err, &f)
			assert.Equal(t, tt.fail.Name, f.Assertion)
			// The message shows the trajectory: turn, tool, input, status.
			assert.Contains(t, err.Error(), "turn 2  fetch {\"url\":\"u1\"}  error: Error: 404")
			assert.Contains(t, err.Error(), `turn 1  search {"limit":5,"q":"paper"}  success`)
		})
	}
}

// TestAssertionsMalformed: a malformed assertion and an unknown tool are
// errors before anything runs, and not failures.
func TestAssertionsMalformed(t *testing.T) {
	t.Parallel()
	bad := []evaltest.Assertion{
		evaltest.AnswerMatches(`(`),
		evaltest.AnswerSchema(json.RawMessage(`{"type": 3}`)),
		evaltest.Sequence("sideways", "search"),
		evaltest.Args("search", func() {}),
	}
	for _, a := range bad {
		err := evaltest.Validate(nil, a)
		require.Error(t, err, a.Name)
		assert.False(t, errors.Is(a.Check(t.Context(), trajectory()), evaltest.ErrFailed), a.Name)
	}
	err := evaltest.Validate([]string{"search", "fetch"}, evaltest.Used("serch"))
	require.ErrorIs(t, err, evaltest.ErrUnknownTool)
	assert.EqualError(t, err, `evaltest: used(serch): unknown tool "serch" (the tools are search, fetch)`)
}

// TestAssertT: Assert reports each failure on the test.
func TestAssertT(t *testing.T) {
	t.Parallel()
	rec := &recordingT{TB: t}
	ok := evaltest.Assert(rec, trajectory(), evaltest.Used("fetch"), evaltest.Used("delete"), evaltest.NotUsed("search"))
	assert.False(t, ok)
	assert.Len(t, rec.errors, 2)
}

type recordingT struct {
	testing.TB
	errors, logs []string
}

func (r *recordingT) Error(args ...any) { r.errors = append(r.errors, args[0].(error).Error()) }
func (r *recordingT) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recordingT) Log(args ...any) { r.logs = append(r.logs, fmt.Sprint(args...)) }
func (r *recordingT) Helper()         {}
