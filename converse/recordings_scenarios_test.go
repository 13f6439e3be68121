package converse_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/tools"
)

// The model IDs of the recorded conversations besides claude's.
const (
	novaPro = "us.amazon.nova-pro-v1:0"
	kimiK2  = "moonshot.kimi-k2-thinking"
)

// scenario is one recorded conversation: what the user says, what the model
// answered when it was recorded, and what the loop must make of it.
type scenario struct {
	name    string // the recording is testdata/<name>.json
	model   string
	prompts []string // one Send each
	stream  bool
	opts    func(*converse.Options) // more options; may be nil
	// replies are the model's side, served to the loop when the recording
	// is made with -update.
	replies []*bedrocktest.Reply

	// What the last Send gives.
	text  string
	stop  types.StopReason
	turns int
	err   error // wrapped by the error of the last Send; nil for success

	calls     []wantCall // every tool call the loop runs, in any order
	noStatus  bool       // the model family gets no toolResult status
	assembled string     // the first assistant message of the last Send, as wirejson.MarshalMessages writes it
}

// wantCall is a tool call the loop must run and answer.
type wantCall struct {
	id, name string
	// input is the input the tool was called with: for a stream, exactly
	// the joined fragments; for Converse, the same JSON value.
	input string
	// output is the JSON of a successful call's result, also the text of
	// its toolResult.
	output string
	// failure, for a failed call, is a part of the error text the model
	// reads, and errIs (optional) what ToolEnd.Err wraps.
	failure string
	errIs   error
}

func useTool(id, name string, input map[string]any) bedrocktest.Call {
	return bedrocktest.Call{ID: id, Name: name, Input: input}
}

var scenarios = []scenario{
	{name: "tool-one", model: claude, prompts: []string{"What time is it?"},
		replies: []*bedrocktest.Reply{
			billed(bedrocktest.ToolUse("I'll check the current time for you.",
				useTool("tooluse_kZJMlvQmRJ6eAm9ZPr0B7Q", "get_current_datetime", map[string]any{"date_format": "%H:%M %Z"})), 1042, 78),
			billed(bedrocktest.Text("It's 15:04 UTC right now."), 1143, 13),
		},
		text: "It's 15:04 UTC right now.", stop: types.StopReasonEndTurn, turns: 2,
		calls: []wantCall{{id: "tooluse_kZJMlvQmRJ6eAm9ZPr0B7Q", name: "get_current_datetime",
			input: `{"date_format":"%H:%M %Z"}`, output: `"15:04 UTC"`}},
	},
	{name: "tool-two-calculators", model: claude, prompts: []string{"What are 10+10 and 30+30?"},
		replies: []*bedrocktest.Reply{
			billed(bedrocktest.ToolUse("I'll calculate both sums at the same time.",
				useTool("AB3", "calculator", map[string]any{"a": 10, "b": 10, "operation": "add"}),
				useTool("PO9", "calculator", map[string]any{"a": 30, "b": 30, "operation": "add"})), 1047, 142),
			billed(bedrocktest.Text("10 + 10 = 20, and 30 + 30 = 60."), 1254, 21),
		},
		text: "10 + 10 = 20, and 30 + 30 = 60.", stop: types.StopReasonEndTurn, turns: 2,
		calls: []wantCall{
			{id: "AB3", name: "calculator", input: `{"a":10,"b":10,"operation":"add"}`, output: "20"},
			{id: "PO9", name: "calculator", input: `{"a":30,"b":30,"operation":"add"}`, output: "60"},
		},
	},
	{name: "tool-error-recovery", model: novaPro, prompts: []string{"What's the weather in Springfield?"},
		replies: []*bedrocktest.Reply{
			billed(bedrocktest.ToolUse("<thinking>The user wants the current weather in Springfield. I will call get_weather with the city Springfield.</thinking>\n",
				useTool("tooluse_3nF8qW2xTgKpLmV9cR1sYA", "get_weather", map[string]any{"city": "Springfield"})), 812, 64),
			billed(bedrocktest.ToolUse("<thinking>The tool says Springfield is ambiguous. The user did not say which one, so I will try the best-known one, Springfield, Illinois, in Fahrenheit.</thinking>\n",
				useTool("tooluse_Xp4T9bWqQ0a7Kc2LmN8vDg", "get_weather", map[string]any{"city": "Springfield, IL", "units": "fahrenheit"})), 951, 83),
			billed(bedrocktest.Text("It's 64.4 °F and clear in Springfield, Illinois. If you meant another Springfield, tell me which state and I'll check there."), 1068, 35),
		},
		text:  "It's 64.4 °F and clear in Springfield, Illinois. If you meant another Springfield, tell me which state and I'll check there.",
		stop:  types.StopReasonEndTurn,
		turns: 3,
		calls: []wantCall{
			{id: "tooluse_3nF8qW2xTgKpLmV9cR1sYA", name: "get_weather", input: `{"city":"Springfield"}`,
				failure: `Error: "Springfield" is ambiguous`},
			{id: "tooluse_Xp4T9bWqQ0a7Kc2LmN8vDg", name: "get_weather", input: `{"city":"Springfield, IL","units":"fahrenheit"}`,
				output: `{"city":"Springfield, IL","temperature":64.4,"units":"fahrenheit","conditions":"clear"}`},
		},
	},
	{name: "tool-unknown", model: claude, prompts: []string{"What's Amazon's share price right now?"},
		replies: []*bedrocktest.Reply{
			billed(bedrocktest.ToolUse("I'll look up the current AMZN share price.",
				useTool("tooluse_hB6sJ1eRTpOq3uYw5ZxK0w", "get_stock_price", map[string]any{"symbol": "AMZN"})), 1045, 67),
			billed(bedrocktest.Text("I'm sorry, I don't have a tool for share prices, so I can't look up AMZN right now. I can tell you the time, do arithmetic or check the weather."), 1171, 39),
		},
		text:  "I'm sorry, I don't have a tool for share prices, so I can't look up AMZN right now. I can tell you the time, do arithmetic or check the weather.",
		stop:  types.StopReasonEndTurn,
		turns: 2,
		calls: []wantCall{{id: "tooluse_hB6sJ1eRTpOq3uYw5ZxK0w", name: "get_stock_price", input: `{"symbol":"AMZN"}`,
			failure: `Error: unknown tool "get_stock_price"; available tools: get_current_datetime, calculator, get_weather, get_location`,
			errIs:   converse.ErrUnknownTool}},
	},
	// Kimi numbers its tool calls functions.<name>:<n> across the
	// conversation, and its family gets no toolResult status.
	{name: "tool-rounds", model: kimiK2, prompts: []string{"How many weeks are left in this year?"},
		replies: []*bedrocktest.Reply{
			billed(bedrocktest.ToolUse("First I need today's date.",
				useTool("functions.get_current_datetime:0", "get_current_datetime", map[string]any{"date_format": "%j"})), 689, 41),
			billed(bedrocktest.ToolUse("",
				useTool("functions.calculator:1", "calculator", map[string]any{"a": 365, "b": 287, "operation": "subtract"})), 752, 38),
			billed(bedrocktest.ToolUse("78 days are left; now I convert them to weeks.",
				useTool("functions.calculator:2", "calculator", map[string]any{"a": 78, "b": 7, "operation": "divide"})), 801, 52),
			billed(bedrocktest.Text("Today is day 287 of 2025, so 78 days are left: about 11 weeks (11 weeks and 1 day)."), 866, 31),
		},
		text:     "Today is day 287 of 2025, so 78 days are left: about 11 weeks (11 weeks and 1 day).",
		stop:     types.StopReasonEndTurn,
		turns:    4,
		noStatus: true,
		calls: []wantCall{
			{id: "functions.get_current_datetime:0", name: "get_current_datetime", input: `{"date_format":"%j"}`, output: `"287"`},
			{id: "functions.calculator:1", name: "calculator", input: `{"a":365,"b":287,"operation":"subtract"}`, output: "78"},
			{id: "functions.calculator:2", name: "calculator", input: `{"a":78,"b":7,"operation":"divide"}`, output: "11.142857142857142"},
		},
	},
	{
		name:  "chat-multi-turn",
		model: claude,
		prompts: []string{
			"Hi! I'm Ana, and I live in Lisbon.",
			"What's the weather like where I live?",
			"Great. Do I need an umbrella this afternoon?",
		},
		replies: []*bedrocktest.Reply{
			billed(bedrocktest.Text("Hi Ana, nice to meet you! How can I help you today?"), 1039, 16),
			billed(bedrocktest.ToolUse("I'll check the current weather in Lisbon for you.",
				useTool("tooluse_Q7mVfN2cSoy1LrT8dPkE4A", "get_weather", map[string]any{"city": "Lisbon"})), 1071, 69),
			billed(bedrocktest.Text("It's sunny in Lisbon right now, at 22 °C."), 1187, 17),
			billed(bedrocktest.Text("No, you shouldn't need one: it's sunny and 22 °C in Lisbon, with no rain reported."), 1221, 25),
		},
		text: "No, you shouldn't need one: it's sunny and 22 °C in Lisbon, with no rain reported.", stop: types.StopReasonEndTurn, turns: 1,
		calls: []wantCall{{id: "tooluse_Q7mVfN2cSoy1LrT8dPkE4A", name: "get_weather", input: `{"city":"Lisbon"}`,
			output: `{"city":"Lisbon","temperature":22,"units":"celsius","conditions":"sunny"}`}},
	},
	// The model keeps asking; the third call is never run.
	{name: "turn-limit", model: claude, prompts: []string{"Keep checking London's weather until the rain stops, then tell me."},
		opts: func(o *converse.Options) { o.MaxTurns = 3 },
		replies: []*bedrocktest.Reply{
			billed(bedrocktest.ToolUse("I'll check the weather in London.",
				useTool("tooluse_aS9dK3jLQw2eRt5YuI7oPg", "get_weather", map[string]any{"city": "London"})), 1053, 66),
			billed(bedrocktest.ToolUse("It's still raining in London. I'll check again.",
				useTool("tooluse_L2kJ9hGfTdSa8PoI7uYt6w", "get_weather", map[string]any{"city": "London"})), 1164, 72),
			billed(bedrocktest.ToolUse("Still light rain. Checking once more.",
				useTool("tooluse_vC4xZ8bNQm1AsD3fGh5JkQ", "get_weather", map[string]any{"city": "London"})), 1281, 70),
		},
		text: "Still light rain. Checking once more.", stop: types.StopReasonToolUse, turns: 3, err: converse.ErrMaxTurns,
		calls: []wantCall{
			{id: "tooluse_aS9dK3jLQw2eRt5YuI7oPg", name: "get_weather", input: `{"city":"London"}`,
				output: `{"city":"London","temperature":12,"units":"celsius","conditions":"light rain"}`},
			{id: "tooluse_L2kJ9hGfTdSa8PoI7uYt6w", name: "get_weather", input: `{"city":"London"}`,
				output: `{"city":"London","temperature":12,"units":"celsius","conditions":"light rain"}`},
		},
	},
	// The output runs out in the middle of the call's input: the call is
	// not run.
	{name: "max-tokens-tool-call", model: claude, prompts: []string{"Convert 98.6 °F to Celsius, showing each step."},
		opts: func(o *converse.Options) {
			o.Request.InferenceConfig = &types.InferenceConfiguration{MaxTokens: aws.Int32(48)}
		},
		replies: []*bedrocktest.Reply{
			billed(bedrocktest.Output(types.StopReasonMaxTokens,
				&types.ContentBlockMemberText{Value: "To convert Fahrenheit to Celsius, subtract 32 and then multiply by 5/9. First, the subtraction:"},
				&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: aws.String("tooluse_E5rT7yUiRo9PaS2dFg4HjA"),
					Name:      aws.String("calculator"),
					Input:     document.NewLazyDocument(map[string]any{"a": 98.6}),
					Type:      "tool_use",
				}}), 1049, 48),
		},
		text:  "To convert Fahrenheit to Celsius, subtract 32 and then multiply by 5/9. First, the subtraction:",
		stop:  types.StopReasonMaxTokens,
		turns: 1,
		err:   converse.ErrMaxTokens,
	},
	// Claude sends an empty first fragment, then the input in pieces that
	// split keys and values.
	{name: "stream-tool-input-deltas", model: claude, prompts: []string{"What's the weather in Paris, in Celsius?"},
		stream: true,
		replies: []*bedrocktest.Reply{
			streamReply(types.StopReasonToolUse, 1051, 81,
				textDeltas("I'll check the", " current weather in", " Paris for you."),
				toolInputDeltas("tooluse_W1qA3zSxTe5DcV7fBg9NhQ", "get_weather", "", `{"city": "`, `Paris"`, `, "units": "cel`, `sius"}`)),
			streamReply(types.StopReasonEndTurn, 1172, 19,
				textDeltas("It's 18 °C and", " partly cloudy in Paris", " right now.")),
		},
		text: "It's 18 °C and partly cloudy in Paris right now.", stop: types.StopReasonEndTurn, turns: 2,
		calls: []wantCall{{id: "tooluse_W1qA3zSxTe5DcV7fBg9NhQ", name: "get_weather", input: `{"city": "Paris", "units": "celsius"}`,
			output: `{"city":"Paris","temperature":18,"units":"celsius","conditions":"partly cloudy"}`}},
		assembled: `{"role":"assistant","content":[
			{"text":"I'll check the current weather in Paris for you."},
			{"toolUse":{"toolUseId":"tooluse_W1qA3zSxTe5DcV7fBg9NhQ","name":"get_weather","input":{"city":"Paris","units":"celsius"}}}]}`,
	},
	// A tool without arguments: its input arrives as empty fragments
	// only, and is {}.
	{name: "stream-empty-input", model: claude, prompts: []string{"Where am I right now?"},
		stream: true,
		replies: []*bedrocktest.Reply{
			streamReply(types.StopReasonToolUse, 1040, 52,
				textDeltas("I'll look up", " your current location."),
				toolInputDeltas("tooluse_M8nB6vCxRz4LkJ2hGf0DsA", "get_location", "", "")),
			streamReply(types.StopReasonEndTurn, 1113, 11,
				textDeltas("You're in Lisbon,", " Portugal.")),
		},
		text: "You're in Lisbon, Portugal.", stop: types.StopReasonEndTurn, turns: 2,
		calls: []wantCall{{id: "tooluse_M8nB6vCxRz4LkJ2hGf0DsA", name: "get_location", input: `{}`, output: `"Lisbon, Portugal"`}},
		assembled: `{"role":"assistant","content":[
			{"text":"I'll look up your current location."},
			{"toolUse":{"toolUseId":"tooluse_M8nB6vCxRz4LkJ2hGf0DsA","name":"get_location","input":{}}}]}`,
	},
	// Extended thinking: the reasoning and its signature must go back
	// unchanged with the tool result.
	{name: "stream-reasoning-signature", model: claude, prompts: []string{"What's 1234 × 5678?"},
		stream: true,
		opts: func(o *converse.Options) {
			o.Request.InferenceConfig = &types.InferenceConfiguration{MaxTokens: aws.Int32(4096)}
			o.Request.AdditionalModelRequestFields = document.NewLazyDocument(map[string]any{
				"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024},
			})
		},
		replies: []*bedrocktest.Reply{
			streamReply(types.StopReasonToolUse, 1066, 187,
				reasoningDeltas(thinkingSignature, "The user wants", " 1234 times 5678.", " That's easy to get wrong", " by hand, so I'll use", " the calculator."),
				textDeltas("I'll multiply", " these with the calculator."),
				toolInputDeltas("tooluse_y6TgH9uJQk3OlP1iKm7NbA", "calculator", "", `{"a": 1234`, `, "b": 5678, "operation"`, `: "multiply"}`)),
			streamReply(types.StopReasonEndTurn, 1298, 14,
				textDeltas("1234 × 5678 =", " 7,006,652.")),
		},
		text: "1234 × 5678 = 7,006,652.", stop: types.StopReasonEndTurn, turns: 2,
		calls: []wantCall{{id: "tooluse_y6TgH9uJQk3OlP1iKm7NbA", name: "calculator",
			input: `{"a": 1234, "b": 5678, "operation": "multiply"}`, output: "7006652"}},
		assembled: `{"role":"assistant","content":[
			{"reasoningContent":{"reasoningText":{"text":"The user wants 1234 times 5678. That's easy to get wrong by hand, so I'll use the calculator.","signature":"` + thinkingSignature + `"}}},
			{"text":"I'll multiply these with the calculator."},
			{"toolUse":{"toolUseId":"tooluse_y6TgH9uJQk3OlP1iKm7NbA","name":"calculator","input":{"a":1234,"b":5678,"operation":"multiply"}}}]}`,
	},
	{name: "stream-two-calls", model: claude, prompts: []string{"Compare the weather in Paris and London."},
		stream: true,
		replies: []*bedrocktest.Reply{
			streamReply(types.StopReasonToolUse, 1049, 118,
				textDeltas("I'll check both", " cities at once."),
				toolInputDeltas("tooluse_O3pL5kMjTn8HbG6vFc2XdQ", "get_weather", "", `{"city"`, `: "Paris"}`),
				toolInputDeltas("tooluse_R9wE1qAzTs4XcD6vFr8BgQ", "get_weather", "", `{"ci`, `ty": "London"}`)),
			streamReply(types.StopReasonEndTurn, 1263, 33,
				textDeltas("Paris is warmer and drier:", " 18 °C and partly cloudy,", " while London has light rain", " at 12 °C.")),
		},
		text: "Paris is warmer and drier: 18 °C and partly cloudy, while London has light rain at 12 °C.", stop: types.StopReasonEndTurn, turns: 2,
		calls: []wantCall{
			{id: "tooluse_O3pL5kMjTn8HbG6vFc2XdQ", name: "get_weather", input: `{"city": "Paris"}`,
				output: `{"city":"Paris","temperature":18,"units":"celsius","conditions":"partly cloudy"}`},
			{id: "tooluse_R9wE1qAzTs4XcD6vFr8BgQ", name: "get_weather", input: `{"city": "London"}`,
				output: `{"city":"London","temperature":12,"units":"celsius","conditions":"light rain"}`},
		},
		assembled: `{"role":"assistant","content":[
			{"text":"I'll check both cities at once."},
			{"toolUse":{"toolUseId":"tooluse_O3pL5kMjTn8HbG6vFc2XdQ","name":"get_weather","input":{"city":"Paris"}}},
			{"toolUse":{"toolUseId":"tooluse_R9wE1qAzTs4XcD6vFr8BgQ","name":"get_weather","input":{"city":"London"}}}]}`,
	},
}

// thinkingSignature stands for the opaque signature Claude puts on its
// reasoning.
const thinkingSignature = "EqQBCkgIBRABGAIiQFv3nL0c9mTq2rJ8wXyZk4oP1aB7dE6fG5hI3jK9lM2nO8pQ0rS4tU6vW1xY3zA5bC7dE9fG1hI3jK5lM7nO9pEgxhZ2VfY2xhdWRlGgw"

// billed sets a reply's token counts and latency to those of a real call.
func billed(r *bedrocktest.Reply, in, out int32) *bedrocktest.Reply {
	r.Output.Usage = &types.TokenUsage{InputTokens: aws.Int32(in), OutputTokens: aws.Int32(out), TotalTokens: aws.Int32(in + out)}
	r.Output.Metrics = &types.ConverseMetrics{LatencyMs: aws.Int64(int64(350 + 21*out))}
	return r
}

// streamBlock is one content block of a hand-written stream.
type streamBlock struct {
	start  map[string]any   // the contentBlockStart event's "start"; nil for none
	deltas []map[string]any // the "delta" of each contentBlockDelta event
}

func textDeltas(parts ...string) streamBlock {
	var b streamBlock
	for _, p := range parts {
		b.deltas = append(b.deltas, map[string]any{"text": p})
	}
	return b
}

func toolInputDeltas(id, name string, fragments ...string) streamBlock {
	b := streamBlock{start: map[string]any{"toolUse": map[string]any{"toolUseId": id, "name": name}}}
	for _, f := range fragments {
		b.deltas = append(b.deltas, map[string]any{"toolUse": map[string]any{"input": f}})
	}
	return b
}

func reasoningDeltas(signature string, parts ...string) streamBlock {
	var b streamBlock
	for _, p := range parts {
		b.deltas = append(b.deltas, map[string]any{"reasoningContent": map[string]any{"text": p}})
	}
	b.deltas = append(b.deltas, map[string]any{"reasoningContent": map[string]any{"signature": signature}})
	return b
}

// streamReply writes a ConverseStream answer event by event, as Claude sends
// it, for what the server's own splitting of an Output does not produce:
// chosen fragments, an empty first input fragment, a reasoning signature.
// Like Bedrock, it pads every payload with a member "p".
func streamReply(stop types.StopReason, in, out int, blocks ...streamBlock) *bedrocktest.Reply {
	const padding = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var events []recording.Event
	add := func(typ string, payload map[string]any) {
		payload["p"] = padding[:1+len(events)*11%len(padding)]
		b, err := json.Marshal(payload)
		if err != nil {
			panic(err) // strings, numbers and maps of them always marshal
		}
		events = append(events, recording.Event{Type: typ, Payload: b})
	}
	add("messageStart", map[string]any{"role": "assistant"})
	for i, b := range blocks {
		if b.start != nil {
			add("contentBlockStart", map[string]any{"contentBlockIndex": i, "start": b.start})
		}
		for _, d := range b.deltas {
			add("contentBlockDelta", map[string]any{"contentBlockIndex": i, "delta": d})
		}
		add("contentBlockStop", map[string]any{"contentBlockIndex": i})
	}
	add("messageStop", map[string]any{"stopReason": stop})
	add("metadata", map[string]any{
		"usage":   map[string]any{"inputTokens": in, "outputTokens": out, "totalTokens": in + out},
		"metrics": map[string]any{"latencyMs": 350 + 21*out},
	})
	return &bedrocktest.Reply{Events: events}
}

// recordedNow is the clock of get_current_datetime in every scenario.
var recordedNow = time.Date(2025, time.October, 14, 15, 4, 5, 0, time.UTC)

// scenarioTools is the registry of every scenario: the built-ins, with a
// fixed clock, and two tools of a weather assistant.
func scenarioTools(t testing.TB) *tools.Registry {
	t.Helper()
	weather, err := tools.New("get_weather", "Returns the current weather in a city: temperature and conditions.", getWeather)
	require.NoError(t, err)
	location, err := tools.New("get_location", "Returns the city the user is in now.",
		func(context.Context, struct{}) (string, error) { return "Lisbon, Portugal", nil })
	require.NoError(t, err)
	reg, err := tools.NewRegistry(
		tools.CurrentDatetime(func() time.Time { return recordedNow }),
		tools.Calculator(),
		weather,
		location,
	)
	require.NoError(t, err)
	return reg
}

type weatherInput struct {
	City  string `json:"city" jsonschema:"the city, with its state or country where the name is ambiguous"`
	Units string `json:"units,omitempty" jsonschema:"celsius (the default) or fahrenheit"`
}

type weatherReport struct {
	City        string  `json:"city"`
	Temperature float64 `json:"temperature"`
	Units       string  `json:"units"`
	Conditions  string  `json:"conditions"`
}

// cityWeather is the weather in degrees Celsius.
var cityWeather = map[string]weatherReport{
	"Paris":           {Temperature: 18, Conditions: "partly cloudy"},
	"London":          {Temperature: 12, Conditions: "light rain"},
	"Lisbon":          {Temperature: 22, Conditions: "sunny"},
	"Springfield, IL": {Temperature: 18, Conditions: "clear"},
}

func getWeather(_ context.Context, in weatherInput) (weatherReport, error) {
	if in.City == "Springfield" {
		return weatherReport{}, errors.New(`"Springfield" is ambiguous: there are Springfields in Illinois, Massachusetts, Missouri and Oregon; add the state, as in "Springfield, IL"`)
	}
	w, ok := cityWeather[in.City]
	if !ok {
		return weatherReport{}, fmt.Errorf("no weather station knows %q", in.City)
	}
	w.City, w.Units = in.City, "celsius"
	if in.Units == "fahrenheit" {
		w.Temperature, w.Units = math.Round((w.Temperature*9/5+32)*10)/10, "fahrenheit"
	}
	return w, nil
}
