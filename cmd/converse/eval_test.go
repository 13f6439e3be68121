package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/evaltest"
)

const (
	evalDataset   = "../../testdata/eval/arithmetic.yaml"
	evalAgentFile = "../../testdata/eval/arithmetic-agent.json"
	evalModel     = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
)

// arithmeticModel stands in for the model of the agent and of the judge of the
// dataset of converse help eval. It asks the calculator what the prompt asks,
// answers with its result, and grades every trajectory a pass.
var arithmeticModel = bedrocktest.HandlerFunc(func(_ context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
	if len(req.System) > 0 {
		return bedrocktest.Text(`{"verdict":"pass","score":0.9,"reason":"The calculator was used and the answer states its result."}`), nil
	}
	last := req.Messages[len(req.Messages)-1]
	switch b := last.Content[0].(type) {
	case *types.ContentBlockMemberToolResult:
		out := b.Value.Content[0].(*types.ToolResultContentBlockMemberText).Value
		if out == "42" {
			return bedrocktest.Text("6 times 7 is 42."), nil
		}
		return bedrocktest.Text(out), nil
	case *types.ContentBlockMemberText:
		in := map[string]any{"a": 6, "b": 7, "operation": "multiply"}
		switch b.Value {
		case "What is 2 plus 3?":
			in = map[string]any{"a": 2, "b": 3, "operation": "add"}
		case "And that plus 10?":
			in = map[string]any{"a": 5, "b": 10, "operation": "add"}
		}
		return bedrocktest.ToolUse("", bedrocktest.Call{ID: "t" + string(rune('0'+len(req.Messages))), Name: "calculator", Input: in}), nil
	}
	return nil, bedrocktest.Validation("unexpected request")
})

// evalEnv keeps the AWS configuration of the machine out of the test.
func evalEnv(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_ACCESS_KEY_ID", fakeKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", fakeSecret)
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "")
	t.Setenv("BEDROCK_MODEL_ID", "")
}

// TestEvalRecordedDataset: converse eval runs the dataset of converse help
// eval offline, the agent's calls and the judge's replayed, prints the
// table and writes JUnit XML and JSON. With -update, the recordings are
// made anew against a bedrocktest model.
func TestEvalRecordedDataset(t *testing.T) {
	evalEnv(t)
	if *update {
		srv := bedrocktest.NewServer(arithmeticModel)
		defer srv.Close()
		err := runEval(t.Context(), []string{"-endpoint", srv.URL, "-model", evalModel, "-record", evalAgentFile, "-update", evalDataset}, &bytes.Buffer{}, &bytes.Buffer{})
		require.NoError(t, err)
	}
	dir := t.TempDir()
	junit, report := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report.json")
	var stdout, stderr bytes.Buffer
	err := runEval(t.Context(), []string{"-replay", evalAgentFile, "-junit", junit, "-json", report, evalDataset}, &stdout, &stderr)
	require.NoError(t, err, stdout.String())
	assert.Regexp(t, `(?m)^multiply +1/1 +100% +100% +\d+ +\$0\.\d{4} +\S+ +ok$`, stdout.String())
	assert.Regexp(t, `(?m)^add twice +2/2 +100% +50% `, stdout.String())
	assert.Regexp(t, `(?m)^  judge\("The agent computes the product with the …", 0.7\) +1/1 +100%`, stdout.String())
	assert.Equal(t, "eval: 1/3: multiply, run 1\neval: 2/3: add twice, run 1\neval: 3/3: add twice, run 2\n", stderr.String())

	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	var suites struct {
		Suites []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(b, &suites))
	require.Len(t, suites.Suites, 1)
	assert.Equal(t, "arithmetic", suites.Suites[0].Name)
	assert.Equal(t, 2, suites.Suites[0].Tests)
	assert.Equal(t, 0, suites.Suites[0].Failures)

	var rep evaltest.Report
	b, err = os.ReadFile(report)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rep))
	assert.True(t, rep.OK())
}

// TestEvalEndpointBelowThreshold: against an endpoint, a case whose
// expectation the agent misses fails the command, and its JUnit testcase,
// with the trajectory in the failure.
func TestEvalEndpointBelowThreshold(t *testing.T) {
	evalEnv(t)
	srv := bedrocktest.NewServer(arithmeticModel)
	defer srv.Close()
	dir := t.TempDir()
	ds := filepath.Join(dir, "ds.json")
	require.NoError(t, os.WriteFile(ds, []byte(`{"name": "wrong", "runs": 2, "cases": [
		{"name": "multiply", "prompt": "What is 6 times 7?", "expect": [{"answer": {"contains": "43"}}]}]}`), 0o600))
	junit := filepath.Join(dir, "junit.xml")
	var stdout bytes.Buffer
	err := runEval(t.Context(), []string{"-endpoint", srv.URL, "-model", evalModel, "-junit", junit, ds}, &stdout, &bytes.Buffer{})
	require.EqualError(t, err, "eval: 1 of 1 cases below their threshold")
	assert.Equal(t, exitFailure, exitStatus(err))
	mustContain(t, "stdout", stdout.String(), `multiply: answer-contains("43"): the answer is "6 times 7 is 42."`, `turn 1  calculator {"a":6,"b":7,"operation":"multiply"}  success`)
	b, err := os.ReadFile(junit)
	require.NoError(t, err)
	mustContain(t, "junit", string(b), `<testsuite name="wrong" tests="1" failures="1"`, `<failure message="passed 0 of 2 runs (0%), below the threshold of 100%" type="threshold">`)
	assert.Len(t, srv.Requests(), 4)
}

// TestEvalUsage: a bad command line, a malformed dataset or one naming a
// tool the agent lacks is a usage error naming the case and the field,
// before any model call.
func TestEvalUsage(t *testing.T) {
	evalEnv(t)
	srv := bedrocktest.NewServer(arithmeticModel)
	defer srv.Close()
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(data), 0o600))
		return p
	}
	judgeFile, err := filepath.Abs("../../testdata/eval/arithmetic-judge.json")
	require.NoError(t, err)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no dataset", nil, "eval: want one DATASET file, got 0 arguments"},
		{"missing", []string{filepath.Join(dir, "nosuch.yaml")}, "no such file"},
		{"malformed", []string{write("bad.yaml", "cases:\n- name: a\n  prompt: hi\n  expect:\n  - answer: {matches: '('}\n")}, "case 1 (a): expect[0]: evaltest: answer-matches((): error parsing regexp"},
		{"unknown tool", []string{"-endpoint", srv.URL, write("tool.yaml", "cases:\n- name: a\n  prompt: hi\n  expect:\n  - used: calculater\n")}, `case 1 (a): expect[0]: evaltest: used(calculater): unknown tool "calculater" (the tools are get_current_datetime, calculator)`},
		{"replay and endpoint", []string{"-replay", evalAgentFile, "-endpoint", srv.URL, evalDataset}, "-replay and -endpoint cannot be used together"},
		{"judge of another model", []string{"-replay", evalAgentFile, write("other.yaml", "judge: {model: other, recording: "+judgeFile+"}\ncases:\n- name: a\n  prompt: hi\n")},
			`arithmetic-judge.json: exchange 1: modelId "us.anthropic.claude-sonnet-4-5-20250929-v1:0", where the dataset's model is "other": record it anew with -update`},
		{"judge missing offline", []string{"-replay", evalAgentFile, write("judged.yaml", "judge: {model: m, recording: none.json}\ncases:\n- name: a\n  prompt: hi\n  expect:\n  - judge: {rubric: fine}\n")}, "none.json is missing, and -replay is offline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := runEval(t.Context(), tt.args, &bytes.Buffer{}, &bytes.Buffer{})
			require.Error(t, err)
			assert.True(t, isUsage(err), err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	assert.Empty(t, srv.Requests())

	var stdout bytes.Buffer
	require.NoError(t, runEval(t.Context(), []string{"-h"}, &stdout, &stdout))
	assert.True(t, strings.HasPrefix(stdout.String(), "usage: converse eval"), stdout.String())
}

// TestEvalHelpDataset: the example dataset of converse help eval is a
// valid dataset.
func TestEvalHelpDataset(t *testing.T) {
	t.Parallel()
	text := helpText("eval")
	_, rest, ok := strings.Cut(text, "Example dataset (YAML; JSON has the same fields):\n\n")
	require.True(t, ok)
	var yaml strings.Builder
	for _, line := range strings.SplitAfter(rest, "\n") {
		if line != "\n" && !strings.HasPrefix(line, "  ") {
			break
		}
		yaml.WriteString(strings.TrimPrefix(line, "  "))
	}
	ds, err := evaltest.ParseDataset([]byte(yaml.String()), true)
	require.NoError(t, err, yaml.String())
	require.Len(t, ds.Cases, 4)
	kinds := map[string]bool{}
	for _, c := range ds.Cases {
		for _, e := range c.Expect {
			b, err := json.Marshal(e)
			require.NoError(t, err)
			var m map[string]any
			require.NoError(t, json.Unmarshal(b, &m))
			for k := range m {
				kinds[k] = true
			}
			if e.Answer != nil {
				b, err := json.Marshal(e.Answer)
				require.NoError(t, err)
				var a map[string]any
				require.NoError(t, json.Unmarshal(b, &a))
				for k := range a {
					kinds["answer."+k] = true
				}
			}
		}
	}
	for _, k := range []string{"used", "notUsed", "sequence", "args", "calls", "turns", "tokens", "cost", "answer", "judge",
		"answer.equals", "answer.contains", "answer.matches", "answer.schema"} {
		assert.True(t, kinds[k], "the example has no %s expectation", k)
	}
	mustContain(t, "help", text, "-junit FILE")
}

// TestEvalCommand: the binary runs converse eval from its command table:
// the dataset of converse help eval offline, as that help says, from the
// checkout's root; converse eval -h prints its flags, and converse -h
// lists it.
func TestEvalCommand(t *testing.T) {
	t.Parallel()
	out := runBinaryIn(t, "../..", testEnv(t), nil, "eval", "-replay", "testdata/eval/arithmetic-agent.json", "testdata/eval/arithmetic.yaml")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Regexp(t, `(?m)^multiply +1/1 +100% +100% `, out.stdout)
	assert.Equal(t, "eval: 1/3: multiply, run 1\neval: 2/3: add twice, run 1\neval: 3/3: add twice, run 2\n", out.stderr)

	out = runBinary(t, testEnv(t), nil, "eval", "-h")
	assert.Equal(t, 0, out.code, out.stderr)
	mustContain(t, "eval -h", out.stdout, "usage: "+evalUsage, "-junit FILE", "-runs N")

	out = runBinary(t, testEnv(t), nil, "-h")
	assert.Equal(t, 0, out.code, out.stderr)
	mustContain(t, "-h", out.stdout, "  "+evalUsage+"\n", "converse help eval")
}
