package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
)

var update = flag.Bool("update", false, "record "+demoFile+" anew")

// The demo of "make demo": the Makefile replays demoFile with demoPrompt.
// Its answer does not depend on when it is replayed: only the calculator
// is called.
const (
	demoFile   = "../../testdata/demo.json"
	demoAnswer = "6 × 7 = 42, and 10 + 10 = 20."
)

// Tool IDs in the form Claude gives them on Bedrock.
const (
	demoMulID = "tooluse_Qm3vXa8TSpWlB0cYd2kF1g"
	demoAddID = "tooluse_7HnKcR4eTz2yPwLs9JbV0A"
)

// demoModel plays Claude: it asks for both sums in one turn, then answers.
func demoModel() bedrocktest.Handler {
	calls := bedrocktest.ToolUse("I'll work out both for you.",
		bedrocktest.Call{ID: demoMulID, Name: "calculator", Input: map[string]any{"a": 6, "b": 7, "operation": "multiply"}},
		bedrocktest.Call{ID: demoAddID, Name: "calculator", Input: map[string]any{"a": 10, "b": 10}},
	)
	setUsage(calls, 1187, 146, 2164)
	answer := bedrocktest.Text(demoAnswer)
	setUsage(answer, 1398, 31, 1203)
	return bedrocktest.Script(calls, answer)
}

func setUsage(r *bedrocktest.Reply, in, out int32, latencyMs int64) {
	r.Output.Usage = &types.TokenUsage{InputTokens: aws.Int32(in), OutputTokens: aws.Int32(out), TotalTokens: aws.Int32(in + out)}
	r.Output.Metrics = &types.ConverseMetrics{LatencyMs: aws.Int64(latencyMs)}
}

// TestDemo replays the demo as "make demo" does, offline. With -update, it
// first records it anew with the demo model.
func TestDemo(t *testing.T) {
	if *update {
		srv := newServer(t, demoModel())
		out := runInProcess(t, nil, "-endpoint", srv.URL, "-record", demoFile, demoPrompt)
		require.Zero(t, out.code, "recording the demo: stderr:\n%s", out.stderr)
	}
	rec, err := recording.Load(demoFile)
	require.NoError(t, err)
	require.Len(t, rec.Exchanges, 2, demoFile)
	require.Equal(t, defaultModel, rec.Exchanges[0].ModelID, demoFile)
	out := runInProcess(t, nil, "-replay", demoFile, "-v", demoPrompt)
	require.Zero(t, out.code, "stderr:\n%s\n(record the demo anew with go test ./cmd/converse -run TestDemo -update)", out.stderr)
	assert.Equal(t, "I'll work out both for you.\n"+demoAnswer+"\n", out.stdout, "stdout")
	mustContain(t, "stderr", out.stderr,
		"replaying "+demoFile+" offline",
		"> "+demoPrompt,
		`→ calculator `+demoMulID+` {"a":6,"b":7,"operation":"multiply"}`,
		`→ calculator `+demoAddID+` {"a":10,"b":10}`,
		"← calculator "+demoMulID+" success in ",
		"← calculator "+demoAddID+" success in ",
		"· turn 2: end_turn",
	)
}

// TestMakeDemo: the Makefile's demo replays demoFile with demoPrompt with
// the program of internal/demo, which prints what converse -replay -v
// does, but for the tools' durations and the order of their results, which
// run at once.
func TestMakeDemo(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	want := fmt.Sprintf("$(GO) run ./cmd/converse/internal/demo %s %q", strings.TrimPrefix(demoFile, "../../"), demoPrompt)
	mustContain(t, "Makefile", string(makefile), want)

	var stdout, stderr bytes.Buffer
	demo := exec.Command("go", "run", "./internal/demo", demoFile, demoPrompt)
	demo.Stdout, demo.Stderr = &stdout, &stderr
	require.NoError(t, demo.Run(), stderr.String())
	out := runInProcess(t, nil, "-replay", demoFile, "-v", demoPrompt)
	require.Zero(t, out.code, out.stderr)
	assert.Equal(t, out.stdout, stdout.String(), "stdout")
	assert.Equal(t, traceLines(out.stderr), traceLines(stderr.String()), "stderr")
}

// traceLines are the lines of a -v trace, sorted, with the durations of
// the tools' calls left out.
func traceLines(trace string) []string {
	lines := strings.Split(regexp.MustCompile(` success in [^:]*:`).ReplaceAllString(trace, " success:"), "\n")
	slices.Sort(lines)
	return lines
}
