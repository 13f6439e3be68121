package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tooluse/bedrock/tools"
)

type greetInput struct {
	Name     string `json:"name" jsonschema:"who to greet"`
	Greeting string `json:"greeting,omitempty" jsonschema:"the word to greet with; Hello if omitted"`
}

func ExampleNew() {
	greet, err := tools.New("greet", "Greets someone by name.",
		func(ctx context.Context, in greetInput) (string, error) {
			if in.Greeting == "" {
				in.Greeting = "Hello"
			}
			return in.Greeting + ", " + in.Name + "!", nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(greet.InputSchema()))

	out, err := greet.Call(context.Background(), json.RawMessage(`{"name":"Ada"}`))
	fmt.Println(out, err)

	// The model sees what is wrong with its input and can try again.
	_, err = greet.Call(context.Background(), json.RawMessage(`{"name":7,"mood":"happy"}`))
	fmt.Println(err)
	// Output:
	// {"type":"object","properties":{"name":{"type":"string","description":"who to greet"},"greeting":{"type":"string","description":"the word to greet with; Hello if omitted"}},"required":["name"],"additionalProperties":false}
	// Hello, Ada! <nil>
	// invalid input: property "name": want string, got integer; unexpected property "mood"
}

func ExampleRegistry() {
	shout, err := tools.New("shout", "Upper-cases a text.",
		func(ctx context.Context, in struct {
			Text string `json:"text"`
		}) (string, error) {
			return strings.ToUpper(in.Text), nil
		})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := tools.NewRegistry(tools.Builtins()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := r.Add(shout); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Names())
	fmt.Println(r.Add(tools.Calculator()))

	// An executor looks up the tool the model asked for and calls it.
	if tool, ok := r.Lookup("shout"); ok {
		out, err := tool.Call(context.Background(), json.RawMessage(`{"text":"hi"}`))
		fmt.Println(out, err)
	}
	// Output:
	// [get_current_datetime calculator shout]
	// tools: duplicate tool "calculator"
	// HI <nil>
}

func ExampleCalculator() {
	calc := tools.Calculator()
	for _, input := range []string{
		`{"a":10,"b":10}`,
		`{"a":7,"b":2,"operation":"divide"}`,
		`{"a":1,"b":0,"operation":"divide"}`,
		`{"a":1,"b":2,"operation":"power"}`,
	} {
		out, err := calc.Call(context.Background(), json.RawMessage(input))
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		result, _ := json.Marshal(out)
		fmt.Println(string(result))
	}
	// Output:
	// 20
	// 3.5
	// error: division by zero
	// error: invalid input: property "operation": want one of [add subtract multiply divide], got power
}

func ExampleCurrentDatetime() {
	clock := func() time.Time { return time.Date(2025, time.March, 14, 15, 9, 26, 0, time.UTC) }
	now := tools.CurrentDatetime(clock) // nil for the real clock
	for _, input := range []string{`{}`, `{"date_format":"%A %-d %B %Y, %I:%M %p %Z"}`} {
		out, err := now.Call(context.Background(), json.RawMessage(input))
		fmt.Println(out, err)
	}
	// Output:
	// 2025-03-14 15:09:26 <nil>
	// Friday 14 March 2025, 03:09 PM UTC <nil>
}

// Check tells whether an answer fits a question's schema before it is sent
// to the tool that asked.
func ExampleQuestion_Check() {
	q := tools.Question{Message: "How many copies?",
		Schema: json.RawMessage(`{"type":"object","properties":{"copies":{"type":"integer","minimum":1}},"required":["copies"]}`)}
	fmt.Println(q.Check(json.RawMessage(`{"copies":2}`)))
	fmt.Println(errors.Is(q.Check(json.RawMessage(`{"copies":0}`)), tools.ErrBadAnswer))
	// Output:
	// <nil>
	// true
}

// A host checks a call's input before it spends anything on the call (an
// approval, a goroutine), then runs it without a second check.
func ExampleTool_CheckInput() {
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"units":{"type":"string","default":"metric"}},"required":["city"]}`)
	weather, err := tools.NewRaw("weather", "Gets the weather.", schema, func(_ context.Context, in json.RawMessage) (any, error) {
		return "sunny, with " + string(in), nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := weather.CheckInput(json.RawMessage(`{"units":"imperial"}`)); err != nil {
		fmt.Println("not run:", err)
	}
	in, err := weather.CheckInput(json.RawMessage(`{"city":"Oslo"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(in.Input()))
	out, err := in.Call(context.Background())
	fmt.Println(out, err)
	// Output:
	// not run: invalid input: missing required property "city"
	// {"city":"Oslo","units":"metric"}
	// sunny, with {"city":"Oslo","units":"metric"} <nil>
}
