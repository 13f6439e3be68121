package servertest_test

import (
	"context"
	"fmt"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporaltest"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	ctemporal "github.com/tooluse/bedrock/converse/temporal"
	"github.com/tooluse/bedrock/tools"
)

// roundsHandler answers every conversation with rounds tool turns of calls
// calls of add each, then a text: the same script whoever asks.
func roundsHandler(rounds, calls int) bedrocktest.Handler {
	return bedrocktest.HandlerFunc(func(_ context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		turn := len(req.Messages) / 2 // 0 for the prompt alone
		if turn >= rounds {
			return bedrocktest.Text("done"), nil
		}
		cs := make([]bedrocktest.Call, calls)
		for i := range cs {
			cs[i] = bedrocktest.Call{ID: fmt.Sprintf("t%d_%d", turn, i), Name: "add", Input: map[string]any{"a": i, "b": turn}}
		}
		return bedrocktest.ToolUse("", cs...), nil
	})
}

// BenchmarkWorkflowStep is one conversation run by Send and by the
// Temporal workflow on the in-process server (temporaltest, SQLite in
// memory, one worker), against the same bedrocktest script.
// turns=4/calls=1 gives the cost of a turn (a model activity and a tool
// activity). turns=1/calls=8 gives that of tool calls, against Send's.
func BenchmarkWorkflowStep(b *testing.B) {
	if testing.Short() {
		b.Skip("the Temporal server benchmarks do not run with -short")
	}
	ts := temporaltest.NewServer() // WithT takes a *testing.T only
	defer ts.Stop()
	type args struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	add, err := tools.New("add", "Adds a and b.", func(_ context.Context, in args) (int, error) { return in.A + in.B, nil })
	if err != nil {
		b.Fatal(err)
	}
	reg, err := tools.NewRegistry(add)
	if err != nil {
		b.Fatal(err)
	}
	for _, shape := range []struct{ rounds, calls int }{{4, 1}, {1, 8}} {
		srv := bedrocktest.NewServer(roundsHandler(shape.rounds, shape.calls))
		queue := fmt.Sprintf("bench-%d-%d", shape.rounds, shape.calls)
		ts.NewWorker(queue, ctemporal.New(srv.Client(), reg).Register)
		name := fmt.Sprintf("turns=%d/calls=%d", shape.rounds+1, shape.calls)
		b.Run(name+"/impl=send", func(b *testing.B) {
			for b.Loop() {
				conv := converse.New(srv.Client(), claude, reg, func(o *converse.Options) { o.MaxTurns = shape.rounds + 1 })
				if _, err := conv.Send(context.Background(), "go"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/impl=workflow", func(b *testing.B) {
			c := ts.GetDefaultClient()
			i := 0
			for b.Loop() {
				i++
				run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: fmt.Sprintf("%s-%d", queue, i), TaskQueue: queue},
					ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "go"})
				if err != nil {
					b.Fatal(err)
				}
				var res ctemporal.Result
				if err := run.Get(context.Background(), &res); err != nil {
					b.Fatal(err)
				}
				if res.Text != "done" {
					b.Fatalf("answer %q", res.Text)
				}
			}
		})
		srv.Close()
	}
}
