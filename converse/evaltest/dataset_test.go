package evaltest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/evaltest"
)

// TestDatasetErrors: a malformed dataset is refused before any model
// call, the error naming the case and the field.
func TestDatasetErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, data, want string
	}{
		{"unknown field", "cases:\n- name: a\n  prompt: hi\n  expect:\n  - used: calculator\n  promt: x\n", `case 1 (a): json: unknown field "promt"`},
		{"two kinds", "cases:\n- name: a\n  prompt: hi\n  expect:\n  - used: calculator\n    notUsed: calculator\n", "case 1 (a): expect[0]: want exactly one of"},
		{"no kind", "cases:\n- name: a\n  prompt: hi\n  expect:\n  - {}\n", "case 1 (a): expect[0]: want exactly one of"},
		{"bad regexp", "cases:\n- name: a\n  prompt: hi\n  expect:\n  - answer: {matches: '('}\n", "case 1 (a): expect[0]: evaltest: answer-matches((): error parsing regexp"},
		{"bad order", "cases:\n- name: a\n  prompt: hi\n  expect:\n  - sequence: [calculator]\n    order: backwards\n", `case 1 (a): expect[0]: evaltest: sequence(backwards: calculator): unknown order "backwards"`},
		{"no prompt", "cases:\n- name: a\n  expect: []\n", "case 1 (a): prompt: empty"},
		{"no name", "cases:\n- prompt: hi\n", "case 1: name: empty"},
		{"twice", "cases:\n- {name: a, prompt: hi}\n- {name: a, prompt: ho}\n", "case 2 (a): name: used by an earlier case"},
		{"no judge", "cases:\n- name: a\n  prompt: hi\n  expect:\n  - judge: {rubric: be nice}\n", "case 1 (a): expect[0]: judge: the dataset has no judge model"},
		{"empty rubric", "judge: {model: m}\ncases:\n- name: a\n  prompt: hi\n  expect:\n  - judge: {rubric: ' '}\n", "case 1 (a): expect[0]: judge: rubric: empty"},
		{"no user", "cases:\n- {name: a, prompt: hi, goal: win}\n", "case 1 (a): goal: the dataset has no user model"},
		{"args both", "cases:\n- name: a\n  prompt: hi\n  expect:\n  - args: {tool: calculator, subset: {}, exact: {}}\n", "case 1 (a): expect[0]: args: want one of subset and exact"},
		{"threshold", "threshold: 2\ncases:\n- {name: a, prompt: hi}\n", "threshold: 2 is not a share from 0 to 1"},
		{"not yaml", "cases: [", "yaml:"},
		{"no cases", "name: x\n", "cases: none"},
		{"no judge model", "judge: {recording: j.json}\ncases:\n- {name: a, prompt: hi}\n", "judge: model: empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := evaltest.ParseDataset([]byte(tt.data), true)
			require.ErrorIs(t, err, evaltest.ErrDataset)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestDatasetUnknownTool: a tool the agent lacks is refused before the
// first model call.
func TestDatasetUnknownTool(t *testing.T) {
	t.Parallel()
	srv := bedrocktest.NewServer(calculatorModel)
	defer srv.Close()
	ds, err := evaltest.ParseDataset([]byte(`{"cases": [{"name": "a", "prompt": "hi", "expect": [{"args": {"tool": "calculater", "subset": {"a": 6}}}]}]}`), false)
	require.NoError(t, err)
	r := &evaltest.Runner{Agent: agent(srv), Tools: []string{"calculator"}}
	_, err = r.Run(t.Context(), ds)
	require.ErrorIs(t, err, evaltest.ErrUnknownTool)
	assert.Contains(t, err.Error(), `case 1 (a): expect[0]: evaltest: args(calculater: {"a":6}): unknown tool "calculater"`)
	assert.Empty(t, srv.Requests())
}

// TestLoadDatasetFile: the dataset of converse help eval loads, its
// recordings resolved beside it.
func TestLoadDatasetFile(t *testing.T) {
	t.Parallel()
	ds, err := evaltest.LoadDataset("../../testdata/eval/arithmetic.yaml")
	require.NoError(t, err)
	assert.Equal(t, "../../testdata/eval/arithmetic-judge.json", ds.Judge.Recording)
	assert.NotEmpty(t, ds.Cases)
}

// TestRunnerFailures: runs below the threshold fail the case, and the
// report says which assertion failed and why, with the trajectory.
func TestRunnerFailures(t *testing.T) {
	t.Parallel()
	srv := bedrocktest.NewServer(calculatorModel)
	defer srv.Close()
	ds := &evaltest.Dataset{Name: "chaos", Runs: 4, Threshold: 0.75, Cases: []evaltest.Case{{
		Name: "multiply", Prompt: "What is 6 times 7?",
		Expect: []evaltest.Expect{{Answer: &evaltest.ExpectAnswer{Contains: "42"}}},
	}}}
	// Every call fails: no run passes.
	chaos := evaltest.Chaos(7, evaltest.Fault{Kind: evaltest.Fail, Rate: 1})
	r := &evaltest.Runner{Agent: agent(srv, func(o *converse.Options) { o.Tools.Middleware = []converse.ToolMiddleware{chaos} })}
	var progress []int
	r.Progress = func(_ *evaltest.Case, run, _, _ int) { progress = append(progress, run) }
	rep, err := r.Run(t.Context(), ds)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3, 4}, progress)
	c := rep.Cases[0]
	assert.False(t, rep.OK())
	assert.Equal(t, 0, c.Passed)
	assert.Contains(t, c.Assertions[0].Failure, `the answer is "Sorry, the calculator failed."`)
	assert.Contains(t, c.Assertions[0].Failure, "turn 1  calculator")

	rt := &recordingT{TB: t}
	rep.Assert(rt)
	assert.Equal(t, []string{"evaltest: case multiply: passed 0 of 4 runs (0%), below the threshold of 75%"}, rt.errors)
	require.Len(t, rt.logs, 1)
	assert.Contains(t, rt.logs[0], "multiply")

	var table, junit strings.Builder
	require.NoError(t, rep.WriteTable(&table))
	assert.Regexp(t, `multiply +0/4 +0% +75% +\d+ +\$0\.\d{4} +\S+ +FAIL`, table.String())
	require.NoError(t, rep.WriteJUnit(&junit))
	assert.Contains(t, junit.String(), `<testsuites>`)
	assert.Contains(t, junit.String(), `<testsuite name="chaos" tests="1" failures="1"`)
	assert.Contains(t, junit.String(), `<failure message="passed 0 of 4 runs (0%), below the threshold of 75%" type="threshold">`)
}

// TestJudgeRecordingMismatch: a judge's request that differs from its
// recording is an error naming the case and the field, not a verdict.
func TestJudgeRecordingMismatch(t *testing.T) {
	t.Parallel()
	srv := bedrocktest.NewServer(calculatorModel)
	defer srv.Close()
	client, _, err := evaltest.Recorded("../../testdata/eval/example-judge.json", false, nil)
	require.NoError(t, err)
	ds := &evaltest.Dataset{Name: "judged", Judge: &evaltest.ModelFile{Model: judgeModel}, Cases: []evaltest.Case{{
		Name: "multiply", Prompt: "What is 6 times 7?",
		Expect: []evaltest.Expect{{Judge: &evaltest.ExpectJudge{Rubric: "Another rubric."}}},
	}}}
	r := &evaltest.Runner{Agent: agent(srv), Judge: &evaltest.Judge{Client: client, Model: judgeModel}}
	_, err = r.Run(t.Context(), ds)
	require.Error(t, err)
	assert.False(t, errors.Is(err, evaltest.ErrFailed))
	assert.Contains(t, err.Error(), "evaltest: case multiply: run 1: ")
	assert.Contains(t, err.Error(), `messages[0].content[0].text: want "Rubric:\nThe agent computes`)
}

// TestChaos: which calls a fault hits depends on the seed and the call,
// about at its rate; a hung call returns at its context's end.
func TestChaos(t *testing.T) {
	t.Parallel()
	ran := 0
	next := func(context.Context, converse.Call) (any, error) { ran++; return "ok", nil }
	hits := func(seed uint64) []bool {
		h := evaltest.Chaos(seed, evaltest.Fault{Tool: "calculator", Kind: evaltest.Garbage, Rate: 0.3})(next)
		var out []bool
		for i := range 200 {
			v, err := h(t.Context(), converse.Call{ID: "call-" + string(rune('A'+i%26)) + string(rune('a'+i/26)), Tool: "calculator"})
			require.NoError(t, err)
			out = append(out, v != "ok")
		}
		return out
	}
	a, b, c := hits(1), hits(1), hits(2)
	assert.Equal(t, a, b, "the same seed hits the same calls")
	assert.NotEqual(t, a, c)
	n := 0
	for _, hit := range a {
		if hit {
			n++
		}
	}
	assert.InDelta(t, 60, n, 25)

	h := evaltest.Chaos(1, evaltest.Fault{Tool: "calculator", Kind: evaltest.Hang, Rate: 1})(next)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { _, err := h(ctx, converse.Call{ID: "x", Tool: "calculator"}); done <- err }()
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)

	other, err := evaltest.Chaos(1, evaltest.Fault{Tool: "calculator", Kind: evaltest.Fail, Rate: 1})(next)(t.Context(), converse.Call{ID: "y", Tool: "other"})
	assert.NoError(t, err)
	assert.Equal(t, "ok", other)
}
