package evaltest_test

import (
	"context"
	"fmt"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/evaltest"
	"github.com/tooluse/bedrock/tools"
)

const model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

func Example() {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "calculator", Input: map[string]any{"a": 6, "b": 7, "operation": "multiply"}}),
		bedrocktest.Text("6 times 7 is 42."),
	))
	defer srv.Close()
	reg, _ := tools.NewRegistry(tools.Builtins()...)
	res, err := converse.Run(context.Background(), srv.Client(), model, reg, "What is 6 times 7?")
	if err != nil {
		fmt.Println(err)
		return
	}

	tr := evaltest.FromResult(res)
	err = evaltest.Check(tr,
		evaltest.Used("calculator"),
		evaltest.NotUsed("get_current_datetime"),
		evaltest.Args("calculator", map[string]any{"operation": "multiply"}),
		evaltest.Turns(1, 2),
		evaltest.AnswerMatches(`\b42\b`),
	)
	fmt.Println("passed:", err == nil)

	// A wrong expectation fails, showing the trajectory.
	fmt.Println(evaltest.Check(tr, evaltest.Sequence(evaltest.Exact, "get_current_datetime", "calculator")))
	// Output:
	// passed: true
	// evaltest: sequence(exact: get_current_datetime, calculator): want [get_current_datetime calculator] (exact), got [calculator]
	// trajectory: 2 turns, 1 tool calls, 30 tokens, $0.0002
	//   turn 1  calculator {"a":6,"b":7,"operation":"multiply"}  success
	//   answer: "6 times 7 is 42."
}
