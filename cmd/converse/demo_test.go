package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

var update = flag.Bool("update", false, "record "+demoFile+" anew")

// The demo of "make demo": the Makefile replays demoFile with demoPrompt.
const (
	demoFile   = "../../testdata/demo.json"
	demoPrompt = "What time is it, and what is 10 + 10?"
)

// Tool IDs in the form Claude gives them on Bedrock.
const (
	demoTimeID = "tooluse_Qm3vXa8TSpWlB0cYd2kF1g"
	demoCalcID = "tooluse_7HnKcR4eTz2yPwLs9JbV0A"
)

// demoModel plays Claude: it asks for the time and the sum in one turn,
// then answers with both results.
func demoModel() bedrocktest.Handler {
	return bedrocktest.HandlerFunc(func(_ context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		if len(req.Messages) == 1 {
			r := bedrocktest.ToolUse("I'll check the current time and work out 10 + 10 for you.",
				bedrocktest.Call{ID: demoTimeID, Name: "get_current_datetime", Input: map[string]any{"date_format": "%A, %B %-d, %Y at %-I:%M %p"}},
				bedrocktest.Call{ID: demoCalcID, Name: "calculator", Input: map[string]any{"a": 10, "b": 10}},
			)
			setUsage(r, 1187, 146, 2164)
			return r, nil
		}
		results := map[string]string{}
		for _, b := range req.Messages[len(req.Messages)-1].Content {
			if tr, ok := b.(*types.ContentBlockMemberToolResult); ok {
				results[aws.ToString(tr.Value.ToolUseId)] = resultText(tr.Value)
			}
		}
		var now string
		if err := json.Unmarshal([]byte(results[demoTimeID]), &now); err != nil {
			return nil, fmt.Errorf("demo: the time result %q: %v", results[demoTimeID], err)
		}
		r := bedrocktest.Text(fmt.Sprintf("It's %s, and 10 + 10 = %s.", now, results[demoCalcID]))
		setUsage(r, 1398, 31, 1203)
		return r, nil
	})
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
		if out.code != 0 {
			t.Fatalf("recording the demo: exit %d, stderr:\n%s", out.code, out.stderr)
		}
	}
	rec, err := bedrocktest.LoadRecording(demoFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Exchanges) != 2 || rec.Exchanges[0].ModelID != defaultModel {
		t.Fatalf("%s: %d exchanges, model %s; want 2 with %s", demoFile, len(rec.Exchanges), rec.Exchanges[0].ModelID, defaultModel)
	}
	out := runInProcess(t, nil, "-replay", demoFile, "-v", demoPrompt)
	if out.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s\n(record the demo anew with go test ./cmd/converse -run TestDemo -update)", out.code, out.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out.stdout, "\n"), "\n")
	if len(lines) != 2 || lines[0] != "I'll check the current time and work out 10 + 10 for you." ||
		!strings.HasPrefix(lines[1], "It's ") || !strings.HasSuffix(lines[1], ", and 10 + 10 = 20.") {
		t.Errorf("stdout:\n%s", out.stdout)
	}
	mustContain(t, "stderr", out.stderr,
		"replaying "+demoFile+" offline",
		"> "+demoPrompt,
		"→ get_current_datetime "+demoTimeID,
		`→ calculator `+demoCalcID+` {"a":10,"b":10}`,
		"← calculator "+demoCalcID+" success in ",
		"← get_current_datetime "+demoTimeID+" success in ",
		"· turn 2: end_turn",
	)
}
