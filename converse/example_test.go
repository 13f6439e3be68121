package converse_test

import (
	"context"
	"fmt"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

type weatherIn struct {
	City string `json:"city" jsonschema:"the city to report on"`
}

type weatherOut struct {
	City    string  `json:"city"`
	Celsius float64 `json:"celsius"`
}

// A whole tool-use conversation, offline: bedrocktest plays the model, and
// the real SDK client talks to it.
func ExampleConversation() {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("Let me check.", bedrocktest.Call{ID: "tooluse_1", Name: "get_weather", Input: map[string]any{"city": "Paris"}}),
		bedrocktest.Text("It is 21°C in Paris."),
	))
	defer srv.Close()

	weather, err := tools.New("get_weather", "Current weather for a city.",
		func(ctx context.Context, in weatherIn) (weatherOut, error) {
			return weatherOut{City: in.City, Celsius: 21}, nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	reg, _ := tools.NewRegistry(weather)

	conv := converse.New(srv.Client(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", reg,
		func(o *converse.Options) {
			o.OnEvent = func(ev converse.Event) {
				if end, ok := ev.(converse.ToolEnd); ok {
					fmt.Printf("tool %s(%s) = %s\n", end.Name, end.Input, end.Output)
				}
			}
		})
	res, err := conv.Send(context.Background(), "What's the weather in Paris?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	fmt.Println(res.StopReason, res.Turns, "turns", res.Usage.TotalTokens, "tokens")
	// Output:
	// tool get_weather({"city":"Paris"}) = {"city":"Paris","celsius":21}
	// It is 21°C in Paris.
	// end_turn 2 turns 30 tokens
}
