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
	res, err := converse.New(srv.Client(), model, reg).Send(context.Background(), "What is 6 times 7?")
	if err != nil {
		fmt.Println(err)
		return
	}

	tr := evaltest.FromResult(res)
	err = evaltest.Check(context.Background(), tr,
		evaltest.Used("calculator"),
		evaltest.NotUsed("get_current_datetime"),
		evaltest.Args("calculator", map[string]any{"operation": "multiply"}),
		evaltest.Turns(1, 2),
		evaltest.AnswerMatches(`\b42\b`),
	)
	fmt.Println("passed:", err == nil)

	// A wrong expectation fails, showing the trajectory.
	fmt.Println(evaltest.Check(context.Background(), tr, evaltest.Sequence(evaltest.Exact, "get_current_datetime", "calculator")))
	// Output:
	// passed: true
	// evaltest: sequence(exact: get_current_datetime, calculator): want [get_current_datetime calculator] (exact), got [calculator]
	// trajectory: 2 turns, 1 tool calls, 30 tokens, $0.0002
	//   turn 1  calculator {"a":6,"b":7,"operation":"multiply"}  success
	//   answer: "6 times 7 is 42."
}

func ExampleRunner() {
	srv := bedrocktest.NewServer(calculatorModel)
	defer srv.Close()

	ds := &evaltest.Dataset{Name: "arithmetic", Runs: 3, Threshold: 0.6, Cases: []evaltest.Case{{
		Name:   "multiply",
		Prompt: "What is 6 times 7?",
		Expect: []evaltest.Expect{
			{Sequence: []string{"calculator"}, Order: evaltest.Exact},
			{Answer: &evaltest.ExpectAnswer{Contains: "42"}},
		},
		Assertions: []evaltest.Assertion{evaltest.Tokens(1000)},
	}}}
	r := &evaltest.Runner{Agent: agent(srv), Tools: []string{"calculator", "get_current_datetime"}}
	rep, err := r.Run(context.Background(), ds)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range rep.Cases {
		fmt.Printf("%s: %d/%d runs passed, ok: %v\n", c.Name, c.Passed, c.Runs, c.OK)
		for _, a := range c.Assertions {
			fmt.Printf("  %s: %d/%d\n", a.Name, a.Passed, c.Runs)
		}
	}
	// Output:
	// multiply: 3/3 runs passed, ok: true
	//   sequence(exact: calculator): 3/3
	//   answer-contains("42"): 3/3
	//   tokens(..1000): 3/3
}

func ExampleChaos() {
	srv := bedrocktest.NewServer(calculatorModel)
	defer srv.Close()

	// Every call of the calculator fails: the agent must say so, not
	// make up an answer.
	chaos := evaltest.Chaos(1, evaltest.Fault{Tool: "calculator", Kind: evaltest.Fail, Rate: 1})
	conv, _ := agent(srv, func(o *converse.Options) { o.Tools.Middleware = append(o.Tools.Middleware, chaos) })(context.Background())
	if _, err := conv.Send(context.Background(), "What is 6 times 7?"); err != nil {
		fmt.Println(err)
		return
	}
	tr := evaltest.FromState(conv.State())
	fmt.Println(tr.Calls[0].Status, tr.Calls[0].Output)
	fmt.Println(evaltest.Check(context.Background(), tr, evaltest.AnswerContains("failed")) == nil)
	// Output:
	// error Error: evaltest: chaos: injected failure
	// true
}

const judgeModel = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

func ExampleJudge() {
	srv := bedrocktest.NewServer(calculatorModel)
	defer srv.Close()
	conv, _ := agent(srv)(context.Background())
	if _, err := conv.Send(context.Background(), "What is 6 times 7?"); err != nil {
		fmt.Println(err)
		return
	}

	// The judge's calls are replayed from testdata; -update records them.
	client, finish, err := evaltest.Recorded("../../testdata/eval/example-judge.json", *update, live(
		bedrocktest.Text(`{"verdict":"pass","score":0.9,"reason":"The agent used the calculator and reported 42."}`),
	))
	if err != nil {
		fmt.Println(err)
		return
	}
	judge := &evaltest.Judge{Client: client, Model: judgeModel}
	tr := evaltest.FromState(conv.State())
	err = evaltest.Check(context.Background(), tr,
		judge.Rubric("The agent computes the product with the calculator tool and states the result.", 0.7))
	fmt.Println("passed:", err == nil)
	fmt.Println("recording used up:", finish() == nil)
	// Output:
	// passed: true
	// recording used up: true
}

func ExampleUser() {
	srv := bedrocktest.NewServer(calculatorModel)
	defer srv.Close()

	client, finish, err := evaltest.Recorded("../../testdata/eval/example-user.json", *update, live(
		bedrocktest.Text(`{"message":"And 6 times 7 again, to be sure?","done":false}`),
		bedrocktest.Text(`{"message":"","done":true}`),
	))
	if err != nil {
		fmt.Println(err)
		return
	}
	ds := &evaltest.Dataset{Name: "arithmetic", User: &evaltest.ModelFile{Model: judgeModel}, Cases: []evaltest.Case{{
		Name:   "insistent user",
		Prompt: "What is 6 times 7?",
		Goal:   "Get the product of 6 and 7, and have it confirmed once.",
		Expect: []evaltest.Expect{{Calls: &evaltest.ExpectCalls{Tool: "calculator", Min: 2}}},
	}}}
	r := &evaltest.Runner{Agent: agent(srv), User: &evaltest.User{Client: client, Model: judgeModel}}
	rep, err := r.Run(context.Background(), ds)
	if err != nil {
		fmt.Println(err)
		return
	}
	c := rep.Cases[0]
	fmt.Printf("%s: %d/%d, %s\n", c.Name, c.Passed, c.Runs, c.Assertions[0].Name)
	fmt.Println("recording used up:", finish() == nil)
	// Output:
	// insistent user: 1/1, calls(calculator, 2..)
	// recording used up: true
}
