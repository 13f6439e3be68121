package converse_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// A turn hook offers only the calculator, on a cheaper model, on the first
// turn, and the whole registry with the conversation's model afterwards.
func ExampleTurnPlan_toolsAndModel() {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "c1", Name: "calculator", Input: map[string]any{"a": 6, "b": 7, "operation": "multiply"}}),
		bedrocktest.Text("42"),
	))
	defer srv.Close()
	reg, _ := tools.NewRegistry(tools.Builtins()...)
	conv := converse.New(srv.Client(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", reg, func(o *converse.Options) {
		o.PrepareTurn = func(_ context.Context, t *converse.TurnPlan) error {
			if t.Number == 1 {
				t.ModelID, t.Offered = "us.anthropic.claude-3-5-haiku-20241022-v1:0", []string{"calculator"}
			}
			return nil
		}
	})
	if _, err := conv.Send(context.Background(), "6 times 7?"); err != nil {
		fmt.Println(err)
		return
	}
	for _, req := range srv.Requests() {
		fmt.Println(aws.ToString(req.ModelId), len(req.ToolConfig.Tools), "tools")
	}
	// Output:
	// us.anthropic.claude-3-5-haiku-20241022-v1:0 1 tools
	// us.anthropic.claude-sonnet-4-5-20250929-v1:0 2 tools
}

// A turn hook ends the Send once the save tool's call was answered: no
// model call follows it.
func ExampleTurnPlan_stop() {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("Saving.", bedrocktest.Call{ID: "c1", Name: "save", Input: map[string]any{}}),
	))
	defer srv.Close()
	save, _ := tools.New("save", "Saves the report.", func(context.Context, struct{}) (string, error) { return "saved", nil })
	reg, _ := tools.NewRegistry(save)
	conv := converse.New(srv.Client(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", reg, func(o *converse.Options) {
		o.PrepareTurn = func(_ context.Context, t *converse.TurnPlan) error {
			for _, call := range t.Answered {
				t.Stop = t.Stop || call.Tool == "save"
			}
			return nil
		}
	})
	res, err := conv.Send(context.Background(), "Save the report.")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text, res.Turns, "turn,", len(srv.Requests()), "model call")
	// Output:
	// Saving. 1 turn, 1 model call
}

// A throttled model call is made again with the fallback model, which
// answers.
func ExampleCallPolicy_fallback() {
	const primary, fallback = "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "us.amazon.nova-pro-v1:0"
	srv := bedrocktest.NewServer(bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		if aws.ToString(req.ModelId) == primary {
			return nil, bedrocktest.Throttling()
		}
		return bedrocktest.Text("Hello from Nova."), nil
	}))
	defer srv.Close()
	client := srv.Client(func(o *bedrockruntime.Options) { o.RetryMaxAttempts = 1 }) // as after the SDK's retries
	conv := converse.New(client, primary, nil, func(o *converse.Options) {
		o.ModelCalls = &converse.CallPolicy{Fallback: []string{fallback}}
		o.OnEvent = func(ev converse.Event) {
			if f, ok := ev.(converse.ModelFallback); ok {
				fmt.Println("turn", f.Turn, "falls back to", f.To)
			}
		}
	})
	res, err := conv.Send(context.Background(), "hi")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Model, "answered:", res.Text)
	// Output:
	// turn 1 falls back to us.amazon.nova-pro-v1:0
	// us.amazon.nova-pro-v1:0 answered: Hello from Nova.
}

// A model call with no first token within FirstToken is cancelled as
// stalled and made again; the retry answers. (The stalled reply would come
// after a minute.)
func ExampleCallPolicy() {
	late := bedrocktest.Text("Too late.")
	late.Latency = time.Minute
	srv := bedrocktest.NewInProcessServer(bedrocktest.Script(late, bedrocktest.Text("Hello.")))
	defer srv.Close()
	conv := converse.New(srv.Client(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", nil, func(o *converse.Options) {
		o.Stream = &converse.StreamPolicy{}
		o.ModelCalls = &converse.CallPolicy{FirstToken: time.Second, Idle: time.Second, Backoff: 10 * time.Millisecond}
		o.OnEvent = func(ev converse.Event) {
			if r, ok := ev.(converse.ModelRetry); ok {
				fmt.Println("retry", r.Retry, "of turn", r.Turn, "after:", r.Err, "- stalled:", errors.Is(r.Err, converse.ErrStalled))
			}
		}
	})
	res, err := conv.Send(context.Background(), "hi")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	// Output:
	// retry 1 of turn 1 after: model call stalled: no first token for 1s - stalled: true
	// Hello.
}
