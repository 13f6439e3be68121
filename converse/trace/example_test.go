package trace_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/trace"
	"github.com/tooluse/bedrock/tools"
)

// A conversation's trace on standard output, offline: bedrocktest plays
// the model. The tool's duration varies from run to run, so this example's
// writer takes it out; a service passes os.Stderr or its log's writer.
func Example() {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "calculator", Input: map[string]any{"operation": "multiply", "a": 6, "b": 7}}),
		bedrocktest.Text("6 × 7 = 42."),
	))
	defer srv.Close()
	reg, _ := tools.NewRegistry(tools.Builtins()...)

	tr := trace.New(noDurations{os.Stdout})
	conv := converse.New(srv.Client(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", reg, func(o *converse.Options) {
		o.OnEvent = tr.Event
		o.Logger = slog.New(tr.Handler())
	})
	res, err := conv.Send(context.Background(), "What is 6 times 7?")
	if err != nil {
		fmt.Println(err)
		return
	}
	tr.Result(res)
	fmt.Println(res.Text)
	// Output:
	// · turn 1: tool_use; tokens 10 in, 5 out; $0.000116
	// → calculator t1 {"a":6,"b":7,"operation":"multiply"}
	// ← calculator t1 success: 42
	// · turn 2: end_turn; tokens 10 in, 5 out; $0.000116
	// · total: 2 model calls, tokens 20 in, 10 out; $0.000231
	// 6 × 7 = 42.
}

// noDurations writes what it is given without the " in 1.2ms" of a tool's
// line.
type noDurations struct{ w io.Writer }

var duration = regexp.MustCompile(` in [0-9.]+[µnm]?s:`)

func (n noDurations) Write(p []byte) (int, error) {
	if _, err := n.w.Write(duration.ReplaceAll(p, []byte(":"))); err != nil {
		return 0, err
	}
	return len(p), nil
}
