package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// withTokens is r with the usage of in input and out output tokens.
func withTokens(r *bedrocktest.Reply, in, out int32) *bedrocktest.Reply {
	r.Output.Usage = &types.TokenUsage{InputTokens: aws.Int32(in), OutputTokens: aws.Int32(out), TotalTokens: aws.Int32(in + out)}
	return r
}

// TestBudgetFlagsWithSession: with -session, a -max-tokens-total or -max-cost
// limit reached ends the run with exit status 1 before the model call that
// would pass it. It says which limit and what was spent. The run again with a
// raised limit and no prompt resumes the session and finishes, each tool call
// run once.
func TestBudgetFlagsWithSession(t *testing.T) {
	t.Parallel()
	// The first model call uses 2,000 tokens in and 100 out: $0.0055 at the
	// 10% regional premium of the default model (us. Claude Sonnet 5.5:
	// $2.20 and $11 a million).
	tests := []struct {
		flag, limit, raised string
		says                []string
	}{
		{"-max-tokens-total", "1500", "100000", []string{"conversation total tokens limit 1500 tokens reached: spent 2100 tokens", "($0.0055)"}},
		{"-max-cost", "0.005", "1", []string{"conversation cost limit $0.0050 reached: spent $0.0055"}},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			marks, session := filepath.Join(dir, "marks"), filepath.Join(dir, "session.json")
			manifest := writeManifest(t, `{"tools": [{"name": "mark", "description": "Marks.",
				"command": [`+quote(os.Args[0])+`, "helper-tool", "mark", `+quote(marks)+`]}]}`)
			srv := newServer(t, bedrocktest.Script(
				withTokens(bedrocktest.ToolUse("", bedrocktest.Call{ID: "m1", Name: "mark"}), 2000, 100),
				bedrocktest.ToolUse("", bedrocktest.Call{ID: "m2", Name: "mark"}),
				bedrocktest.Text("Done."),
			))
			args := []string{"-endpoint", srv.URL, "-tools", manifest, "-no-builtins", "-session", session}

			out := runDetached(t, "", append(args, tt.flag, tt.limit, "go")...)
			require.Equal(t, exitLimit, out.code, out.stderr)
			mustContain(t, "stderr", out.stderr, tt.says...)
			mustContain(t, "stderr", out.stderr, "; raise "+tt.flag+"; the session is kept: run converse -session "+session+" with a higher "+tt.flag+" and no prompt to go on\n")
			assert.Len(t, srv.Requests(), 1, "no model call past the limit")
			assert.Equal(t, 1, runs(t, marks), "the first round ran")

			out = runDetached(t, "", append(args, tt.flag, tt.limit)...)
			assert.Equal(t, exitLimit, out.code, "the same limit stops the resume at once: %s", out.stderr)
			assert.Len(t, srv.Requests(), 1)

			out = runDetached(t, "", append(args, tt.flag, tt.raised, "-v")...)
			require.Equal(t, 0, out.code, out.stderr)
			assert.Equal(t, "Done.\n", out.stdout)
			assert.Contains(t, out.stderr, "· resuming the session")
			assert.Equal(t, 2, runs(t, marks), "each call ran once")
			reqs := srv.Requests()
			require.Len(t, reqs, 3)
			assert.Equal(t, `"marked"`, resultText(toolResults(t, reqs[1])["m1"]), "the resume sent the first round's result")
			assert.Equal(t, `"marked"`, resultText(toolResults(t, reqs[2])["m2"]))
		})
	}
}

// TestCostInTrace: -v shows the cost of each model call and the total, at
// the model's prices; a model without known prices shows none.
func TestCostInTrace(t *testing.T) {
	t.Parallel()
	out, _ := runMultiply(t, "-v", "What is 6 times 7?")
	// 10 in and 5 out a call at $2.20 and $11 a million.
	mustContain(t, "stderr", out.stderr,
		"· turn 1: tool_use; tokens 10 in, 5 out; $0.000077\n",
		"· turn 2: end_turn; tokens 10 in, 5 out; $0.000077\n",
		"· total: 2 model calls, tokens 20 in, 10 out; $0.000154\n",
	)

	out, _ = runMultiply(t, "-v", "-model", "cohere.command-r-v1:0", "What is 6 times 7?")
	mustContain(t, "stderr", out.stderr, "· turn 1: tool_use; tokens 10 in, 5 out\n", "· total: 2 model calls, tokens 20 in, 10 out\n")
	assert.NotContains(t, out.stderr, "$")
}

// TestJSONCost: -json has "costUSD", the usage in dollars rounded to
// the microdollar, when the model's prices are known, and leaves it out
// when they are not.
func TestJSONCost(t *testing.T) {
	t.Parallel()
	for model, want := range map[string]string{
		"global.anthropic.claude-sonnet-4-5-20250929-v1:0": "0.00021",  // (20*3 + 10*15) / 1e6
		"us.anthropic.claude-sonnet-4-5-20250929-v1:0":     "0.000231", // (20*3.3 + 10*16.5) / 1e6
		"us.amazon.nova-micro-v1:0":                        "0.000002", // (20*0.035 + 10*0.14) / 1e6 = 0.0000021
		"us.amazon.nova-pro-v1:0":                          "0.000048", // (20*0.8 + 10*3.2) / 1e6
		"cohere.command-r-v1:0":                            "",
	} {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, multiply())
			out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-json", "-model", model, "What is 6 times 7?")
			require.Equal(t, 0, out.code, out.stderr)
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(out.stdout), &got), out.stdout)
			assert.NotContains(t, got, "cost_usd", "one key style: camelCase")
			cost, ok := got["costUSD"]
			if want == "" {
				assert.False(t, ok, "costUSD without prices: %v", cost)
				return
			}
			assert.Contains(t, out.stdout, `"costUSD": `+want+",\n", "rounded to 6 decimal places, without float noise")
		})
	}
}

// TestBudgetUsageErrors: a limit that is not positive, and -max-cost for a
// model whose prices are unknown, are usage errors before any model call.
func TestBudgetUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		says string
	}{
		{[]string{"-max-cost", "0"}, "-max-cost 0: want a positive number of dollars"},
		{[]string{"-max-cost", "-1"}, "-max-cost -1: want a positive number of dollars"},
		{[]string{"-max-cost", "NaN"}, "-max-cost NaN: want a positive number of dollars"},
		{[]string{"-max-tokens-total", "0"}, "-max-tokens-total 0: want a positive number"},
		{[]string{"-max-cost", "1", "-model", "cohere.command-r-v1:0"}, "-max-cost: the prices of model cohere.command-r-v1:0 are not known to converse"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			srv := newServer(t, bedrocktest.Script(bedrocktest.Text("Hi.")))
			out := runInProcess(t, nil, append(append([]string{"-endpoint", srv.URL}, tt.args...), "hello")...)
			assert.Equal(t, 2, out.code, out.stderr)
			assert.Contains(t, out.stderr, tt.says)
			assert.Empty(t, srv.Requests())
		})
	}
}

// TestJSONHelpDocumentsEveryField: "converse help json" shows every field
// of the object -json prints, and of its usage, in its example.
func TestJSONHelpDocumentsEveryField(t *testing.T) {
	text := helpText("json")
	for _, typ := range []reflect.Type{reflect.TypeFor[jsonResult](), reflect.TypeFor[jsonUsage]()} {
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			assert.Contains(t, text, `"`+name+`":`, "the json help shows %s", name)
		}
	}
}
