package converse_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// forecast is the structured answer of the tests.
type forecast struct {
	City string `json:"city"`
	Temp int    `json:"temp" jsonschema:"degrees Celsius"`
}

const (
	valid   = `{"city":"Oslo","temp":3}`
	invalid = `{"city":"Oslo","temp":"cold"}`
	finalFn = "final_forecast"
)

// weatherTools is a registry with one tool, used along the way.
func weatherTools(t *testing.T) *tools.Registry {
	t.Helper()
	weather := func(context.Context, struct {
		City string `json:"city"`
	}) (string, error) {
		return "3 degrees", nil
	}
	tool, err := tools.New("get_weather", "Reports the weather.", weather)
	require.NoError(t, err)
	reg, err := tools.NewRegistry(tool)
	require.NoError(t, err)
	return reg
}

func call(id, name, input string) bedrocktest.Call {
	var v map[string]any
	if err := json.Unmarshal([]byte(input), &v); err != nil {
		panic(err)
	}
	return bedrocktest.Call{ID: id, Name: name, Input: v}
}

// The two paths, each with the scripted replies of an answer that is
// invalid and then corrected, after a tool call along the way.
var paths = []struct {
	name, model   string
	answer        func(id, json string) *bedrocktest.Reply
	correctedWith string // how the correction reaches the model
}{
	{"native", claude, func(_, js string) *bedrocktest.Reply { return bedrocktest.Text(js) }, "text"},
	{"forced tool", novaPro, func(id, js string) *bedrocktest.Reply {
		return bedrocktest.ToolUse("Here it is.", call(id, finalFn, js))
	}, "toolResult"},
}

func TestStructured(t *testing.T) {
	for _, p := range paths {
		for _, m := range modes {
			t.Run(p.name+"/"+m.name, func(t *testing.T) {
				srv, client := serve(t, bedrocktest.Script(
					bedrocktest.ToolUse("", call("t1", "get_weather", `{"city":"Oslo"}`)),
					p.answer("t2", valid),
					bedrocktest.Text("You are welcome."),
				))
				conv := converse.New(client, p.model, weatherTools(t), m.opt)
				got, res, err := converse.Structured[forecast](context.Background(), conv, "Weather in Oslo?")
				require.NoError(t, err)
				assert.Equal(t, forecast{City: "Oslo", Temp: 3}, got)
				assert.JSONEq(t, valid, res.Text)
				assert.Equal(t, 2, res.Turns)

				reqs := srv.Requests()
				require.Len(t, reqs, 2)
				for _, r := range reqs {
					specs := r.ToolConfig.Tools
					if p.name == "native" {
						require.NotNil(t, r.OutputConfig)
						js := r.OutputConfig.TextFormat.Structure.(*types.OutputFormatStructureMemberJsonSchema).Value
						assert.Equal(t, types.OutputFormatTypeJsonSchema, r.OutputConfig.TextFormat.Type)
						assert.JSONEq(t, `{"type":"object","required":["city","temp"],"additionalProperties":false,
							"properties":{"city":{"type":"string"},"temp":{"type":"integer","description":"degrees Celsius"}}}`, aws.ToString(js.Schema))
						assert.Len(t, specs, 1, "no final tool on the native path")
						assert.Nil(t, r.ToolConfig.ToolChoice)
						continue
					}
					assert.Nil(t, r.OutputConfig)
					require.Len(t, specs, 2)
					assert.Equal(t, finalFn, aws.ToString(specs[1].(*types.ToolMemberToolSpec).Value.Name))
					assert.Equal(t, &types.ToolChoiceMemberAny{}, r.ToolConfig.ToolChoice, "every turn must end in a tool call")
				}

				// The kept history ends with the answer as text, and the
				// conversation goes on: the server validates the next request.
				hist := conv.History()
				last := hist[len(hist)-1]
				assert.Equal(t, types.ConversationRoleAssistant, last.Role)
				for _, b := range last.Content {
					_, isCall := b.(*types.ContentBlockMemberToolUse)
					assert.False(t, isCall, "no unanswered call is kept")
				}
				assert.Contains(t, textOfMessage(last), valid)
				next, err := conv.Send(context.Background(), "Thanks!")
				require.NoError(t, err)
				assert.Equal(t, "You are welcome.", next.Text)
				assert.Nil(t, srv.Requests()[2].OutputConfig, "a plain Send after a structured one has no schema")
			})
		}
	}
}

func textOfMessage(m types.Message) string {
	var sb strings.Builder
	for _, b := range m.Content {
		if t, ok := b.(*types.ContentBlockMemberText); ok {
			sb.WriteString(t.Value)
		}
	}
	return sb.String()
}

// lastCorrection is the text the model got back in the last message of r:
// a user text, or the toolResult of the final tool.
func lastCorrection(t *testing.T, r *bedrocktest.Request) (kind, text string) {
	t.Helper()
	last := r.Messages[len(r.Messages)-1]
	require.Equal(t, types.ConversationRoleUser, last.Role)
	for _, b := range last.Content {
		switch b := b.(type) {
		case *types.ContentBlockMemberText:
			return "text", b.Value
		case *types.ContentBlockMemberToolResult:
			return "toolResult", b.Value.Content[0].(*types.ToolResultContentBlockMemberText).Value
		}
	}
	t.Fatal("no correction")
	return "", ""
}

func TestStructuredCorrected(t *testing.T) {
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			srv, client := serve(t, bedrocktest.Script(p.answer("t1", invalid), p.answer("t2", valid)))
			var rejected []converse.AnswerRejected
			conv := converse.New(client, p.model, nil, func(o *converse.Options) { o.OnEvent = rejectedInto(&rejected) })
			got, res, err := converse.Structured[forecast](context.Background(), conv, "Weather in Oslo?")
			require.NoError(t, err)
			assert.Equal(t, forecast{City: "Oslo", Temp: 3}, got)
			assert.Equal(t, 2, res.Turns)
			assert.Equal(t, types.StopReasonEndTurn, res.StopReason)
			if p.name == "native" { // the final tool's calls are ToolEnds instead
				assert.Equal(t, []converse.AnswerRejected{{Turn: 1, Answer: invalid, Reason: `property "temp": want integer, got string`}}, rejected)
			} else {
				assert.Empty(t, rejected)
			}
			kind, text := lastCorrection(t, srv.Requests()[1])
			assert.Equal(t, p.correctedWith, kind)
			assert.True(t, strings.HasPrefix(text, `Error: the answer does not match the schema: property "temp": want integer, got string`), text)
			assert.NotContains(t, text, "converse:")
			assert.NotContains(t, text, "forecast{")
		})
	}
	t.Run("forced tool answered in text", func(t *testing.T) {
		srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("It is 3 degrees."), paths[1].answer("t1", valid)))
		var rejected []converse.AnswerRejected
		conv := converse.New(client, novaPro, nil, func(o *converse.Options) { o.OnEvent = rejectedInto(&rejected) })
		got, _, err := converse.Structured[forecast](context.Background(), conv, "Weather in Oslo?")
		require.NoError(t, err)
		assert.Equal(t, forecast{City: "Oslo", Temp: 3}, got)
		assert.Equal(t, []converse.AnswerRejected{{Turn: 1, Answer: "It is 3 degrees.",
			Reason: "answer by calling the tool final_forecast, with the answer as its input"}}, rejected)
		kind, text := lastCorrection(t, srv.Requests()[1])
		assert.Equal(t, "text", kind)
		assert.Equal(t, "Error: the answer does not match the schema: answer by calling the tool final_forecast, with the answer as its input", text)
	})
}

// rejectedInto is an OnEvent keeping the AnswerRejected events in rejected.
func rejectedInto(rejected *[]converse.AnswerRejected) func(converse.Event) {
	return func(ev converse.Event) {
		if e, ok := ev.(converse.AnswerRejected); ok {
			*rejected = append(*rejected, e)
		}
	}
}

func TestStructuredStaysInvalid(t *testing.T) {
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			srv, client := serve(t, bedrocktest.Script(p.answer("t1", invalid), p.answer("t2", invalid), bedrocktest.Text("ok")))
			conv := converse.New(client, p.model, weatherTools(t), func(o *converse.Options) { o.MaxTurns = 2 })
			got, res, err := converse.Structured[forecast](context.Background(), conv, "Weather in Oslo?")
			require.ErrorIs(t, err, converse.ErrMaxTurns)
			require.ErrorIs(t, err, converse.ErrInvalidAnswer)
			assert.ErrorContains(t, err, `property "temp": want integer, got string`)
			assert.Zero(t, got)
			require.NotNil(t, res)
			assert.Equal(t, 2, res.Turns)
			assert.Len(t, srv.Requests(), 2)
			// What is kept is valid history: another Send is accepted.
			if p.name == "native" {
				_, err = conv.Send(context.Background(), "Never mind.")
			} else {
				_, err = conv.Resume(context.Background())
			}
			require.NoError(t, err)
		})
	}
	t.Run("guardrail", func(t *testing.T) {
		_, client := serve(t, bedrocktest.Script(bedrocktest.Output(types.StopReasonGuardrailIntervened,
			&types.ContentBlockMemberText{Value: "Sorry."})))
		_, _, err := converse.Structured[forecast](context.Background(), converse.New(client, claude, nil), "Weather?")
		require.ErrorIs(t, err, converse.ErrInvalidAnswer)
		assert.NotErrorIs(t, err, converse.ErrMaxTurns)
		assert.ErrorContains(t, err, "guardrail_intervened")
	})
}

func TestStructuredJSON(t *testing.T) {
	schema := json.RawMessage(`{"title":"Forecast","type":"object","properties":{"city":{"type":"string"},
		"unit":{"type":"string","default":"C"}},"required":["city"]}`)
	srv, client := serve(t, bedrocktest.Script(bedrocktest.ToolUse("", call("t1", "final_Forecast", `{"city":"Oslo"}`))))
	got, res, err := converse.StructuredJSON(context.Background(), converse.New(client, novaPro, nil), "Weather?", schema)
	require.NoError(t, err)
	assert.JSONEq(t, `{"city":"Oslo","unit":"C"}`, string(got), "defaults filled in")
	assert.Equal(t, types.StopReasonEndTurn, res.StopReason, "the history ends with the answer as text, not a tool call")
	assert.Equal(t, "final_Forecast", aws.ToString(srv.Requests()[0].ToolConfig.Tools[0].(*types.ToolMemberToolSpec).Value.Name))

	_, _, err = converse.StructuredJSON(context.Background(), converse.New(client, novaPro, nil), "Weather?", json.RawMessage(`{"type":"array"}`))
	require.ErrorIs(t, err, tools.ErrInvalidTool)
	assert.Empty(t, srv.Requests()[1:], "no model call")
}

// TestCheckSchema: a schema StructuredJSON cannot take is named as the
// answer's schema, not as a tool's input schema, and CheckSchema gives
// StructuredJSON's error without a conversation.
func TestCheckSchema(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"not an object schema", `{"type":"array"}`, `converse: answer schema: type must be "object", got array`},
		{"not JSON", `{"type":`, "converse: answer schema: "},
		{"not a JSON Schema", `{"type":"object","properties":{"a":{"minLength":-1}}}`, `converse: answer schema is not a valid JSON Schema: at "properties.*.minLength"`},
	}
	_, client := serve(t, bedrocktest.Script())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := converse.CheckSchema(json.RawMessage(tt.schema))
			require.ErrorIs(t, err, tools.ErrInvalidTool)
			assert.True(t, strings.HasPrefix(err.Error(), tt.want), err.Error())
			assert.NotContains(t, err.Error(), "input schema")
			assert.NotContains(t, err.Error(), "final_answer")
			_, _, sendErr := converse.StructuredJSON(context.Background(), converse.New(client, novaPro, nil), "Weather?", json.RawMessage(tt.schema))
			assert.Equal(t, err.Error(), sendErr.Error(), "StructuredJSON's error")
		})
	}
	require.NoError(t, converse.CheckSchema(json.RawMessage(`{"type":"object"}`)))
}

func TestStructuredFinalToolNameTaken(t *testing.T) {
	tool, err := tools.New(finalFn, "Clashes.", func(context.Context, struct{}) (int, error) { return 0, nil })
	require.NoError(t, err)
	reg, err := tools.NewRegistry(tool)
	require.NoError(t, err)
	srv, client := serve(t, bedrocktest.Script(bedrocktest.Text(valid)))
	_, _, err = converse.Structured[forecast](context.Background(), converse.New(client, novaPro, reg), "Weather?")
	assert.ErrorContains(t, err, `final tool "final_forecast"`)
	_, _, err = converse.Structured[forecast](context.Background(), converse.New(client, claude, reg, func(o *converse.Options) { o.ModelCalls = &converse.CallPolicy{Fallback: []string{novaPro}} }), "Weather?")
	assert.ErrorContains(t, err, `final tool "final_forecast"`, "a fallback may take the final tool")
	assert.Empty(t, srv.Requests())

	// A native model that only ever gets the schema needs no final tool.
	got, _, err := converse.Structured[forecast](context.Background(), converse.New(client, claude, reg), "Weather?")
	require.NoError(t, err)
	assert.Equal(t, forecast{City: "Oslo", Temp: 3}, got)
}

func TestStrictReachesTheWire(t *testing.T) {
	noop := func(context.Context, struct{}) (int, error) { return 0, nil }
	strict, err := tools.New("strict_tool", "Is strict.", noop, func(o *tools.Options) { o.Strict = true })
	require.NoError(t, err)
	plain, err := tools.New("plain_tool", "Is not.", noop)
	require.NoError(t, err)
	reg, err := tools.NewRegistry(strict, plain)
	require.NoError(t, err)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("ok")))
			_, err := converse.New(client, claude, reg, m.opt).Send(context.Background(), "hi")
			require.NoError(t, err)
			r := srv.Requests()[0]
			specs := r.ToolConfig.Tools
			require.Len(t, specs, 2)
			assert.Equal(t, aws.Bool(true), specs[0].(*types.ToolMemberToolSpec).Value.Strict)
			assert.Nil(t, specs[1].(*types.ToolMemberToolSpec).Value.Strict, "left out, not false")
			assert.Equal(t, 1, strings.Count(string(r.Body), `"strict":true`))
		})
	}
}

// TestStructuredForcedHistoryStaysValid: on the forced path, the rejected call
// of the final tool and its error result stay in the history. So the requests
// after the structured Send still describe the final tool (as withdrawn)
// though the registry is empty. bedrocktest, like Bedrock, rejects tool blocks
// without a toolConfig. A restored copy goes on too.
func TestStructuredForcedHistoryStaysValid(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(paths[1].answer("t1", invalid), paths[1].answer("t2", valid),
		bedrocktest.Text("You are welcome."), bedrocktest.Text("Bye.")))
	conv := converse.New(client, novaPro, nil)
	_, _, err := converse.Structured[forecast](context.Background(), conv, "Weather in Oslo?")
	require.NoError(t, err)

	_, err = conv.Send(context.Background(), "Thanks!")
	require.NoError(t, err)
	cfg := srv.Requests()[2].ToolConfig
	require.NotNil(t, cfg)
	require.Len(t, cfg.Tools, 1)
	spec := cfg.Tools[0].(*types.ToolMemberToolSpec).Value
	assert.Equal(t, finalFn, aws.ToString(spec.Name))
	assert.Contains(t, aws.ToString(spec.Description), "No longer offered")
	assert.Nil(t, cfg.ToolChoice, "a plain Send forces no tool")

	restored, err := converse.Restore(client, nil, conv.State())
	require.NoError(t, err)
	_, err = restored.Send(context.Background(), "Bye!")
	require.NoError(t, err)
	require.Len(t, srv.Requests(), 4)
}

// TestStructuredFinalToolTraced: the final tool's calls are reported as any
// call: ToolStart and ToolEnd events and an execute_tool span, the rejected
// one failed with invalid_input, the answer a success.
func TestStructuredFinalToolTraced(t *testing.T) {
	tr := newTraced(t)
	_, client := serve(t, bedrocktest.Script(paths[1].answer("t1", invalid), paths[1].answer("t2", valid)))
	var events []converse.Event
	conv := converse.New(client, novaPro, nil, tr.options, func(o *converse.Options) {
		o.OnEvent = func(ev converse.Event) {
			switch ev.(type) {
			case converse.ToolStart, converse.ToolEnd:
				events = append(events, ev)
			}
		}
	})
	_, _, err := converse.Structured[forecast](context.Background(), conv, "Weather in Oslo?")
	require.NoError(t, err)

	require.Len(t, events, 4)
	assert.Equal(t, converse.ToolStart{Turn: 1, ID: "t1", Name: finalFn, Input: json.RawMessage(invalid)}, events[0])
	rejected := events[1].(converse.ToolEnd)
	assert.Equal(t, "t1", rejected.ID)
	assert.Equal(t, types.ToolResultStatusError, rejected.Status)
	require.ErrorIs(t, rejected.Err, converse.ErrInvalidAnswer)
	assert.ErrorContains(t, rejected.Err, `property "temp": want integer, got string`)
	assert.Equal(t, converse.ToolStart{Turn: 2, ID: "t2", Name: finalFn, Input: json.RawMessage(valid)}, events[2])
	answer := events[3].(converse.ToolEnd)
	assert.Equal(t, types.ToolResultStatusSuccess, answer.Status)
	assert.NoError(t, answer.Err)
	assert.JSONEq(t, valid, string(answer.Output))

	spans := tr.named("execute_tool " + finalFn)
	require.Len(t, spans, 2)
	assert.Equal(t, "invalid_input", attrs(spans[0])["error.type"].AsString())
	assert.Equal(t, "t1", attrs(spans[0])["gen_ai.tool.call.id"].AsString())
	assert.NotContains(t, attrs(spans[1]), attribute.Key("error.type"), "the answer is no failure")
	assert.Equal(t, "t2", attrs(spans[1])["gen_ai.tool.call.id"].AsString())
}

// TestStructuredClosesObjects: Bedrock's structured output and strict tools
// take only object schemas with "additionalProperties": false. The library
// adds it where a schema leaves it out (bedrocktest, like Bedrock, rejects a
// request without it). A schema that sets it otherwise fails before any model
// call.
func TestStructuredClosesObjects(t *testing.T) {
	open := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},
		"at":{"type":"object","properties":{"lat":{"type":"number"}}}},"required":["city"]}`)
	closed := `{"type":"object","additionalProperties":false,"properties":{"city":{"type":"string"},
		"at":{"type":"object","additionalProperties":false,"properties":{"lat":{"type":"number"}}}},"required":["city"]}`
	ctx := context.Background()
	t.Run("native answer schema", func(t *testing.T) {
		srv, client := serve(t, bedrocktest.Script(bedrocktest.Text(`{"city":"Oslo","at":{"lat":59.9}}`)))
		got, _, err := converse.StructuredJSON(ctx, converse.New(client, claude, nil), "Where?", open)
		require.NoError(t, err)
		assert.JSONEq(t, `{"city":"Oslo","at":{"lat":59.9}}`, string(got))
		js := srv.Requests()[0].OutputConfig.TextFormat.Structure.(*types.OutputFormatStructureMemberJsonSchema)
		assert.JSONEq(t, closed, aws.ToString(js.Value.Schema))
	})
	t.Run("strict tool", func(t *testing.T) {
		echo := func(_ context.Context, in json.RawMessage) (any, error) { return in, nil }
		tool, err := tools.NewRaw("locate", "Locates.", open, echo, func(o *tools.Options) { o.Strict = true })
		require.NoError(t, err)
		reg, err := tools.NewRegistry(tool)
		require.NoError(t, err)
		srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("ok")))
		_, err = converse.New(client, claude, reg).Send(ctx, "hi")
		require.NoError(t, err)
		spec := srv.Requests()[0].ToolConfig.Tools[0].(*types.ToolMemberToolSpec)
		schema, err := spec.Value.InputSchema.(*types.ToolInputSchemaMemberJson).Value.MarshalSmithyDocument()
		require.NoError(t, err)
		assert.JSONEq(t, closed, string(schema))
	})
	extra := json.RawMessage(`{"type":"object","properties":{"tags":{"type":"object","additionalProperties":{"type":"string"}}}}`)
	t.Run("native answer schema with extra properties", func(t *testing.T) {
		srv, client := serve(t, bedrocktest.Script(bedrocktest.Text(`{}`)))
		_, _, err := converse.StructuredJSON(ctx, converse.New(client, claude, nil), "Tags?", extra)
		require.EqualError(t, err, "converse: the schema of a structured answer: the object schema at /properties/tags sets additionalProperties, which must be false or left out")
		assert.Empty(t, srv.Requests())
	})
	t.Run("strict tool with extra properties", func(t *testing.T) {
		tool, err := tools.NewRaw("tag", "Tags.", extra, func(context.Context, json.RawMessage) (any, error) { return "ok", nil },
			func(o *tools.Options) { o.Strict = true })
		require.NoError(t, err)
		reg, err := tools.NewRegistry(tool)
		require.NoError(t, err)
		srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("ok")))
		_, err = converse.New(client, claude, reg).Send(ctx, "hi")
		require.ErrorContains(t, err, `converse: strict tool "tag": input schema: the object schema at /properties/tags sets additionalProperties`)
		assert.Empty(t, srv.Requests())
	})
}

// TestStructuredSaysUnsupportedConstraints: the constraints that Bedrock's
// structured output and strict tools do not take (an int8's bounds, a length)
// go in descriptions in what is sent. bedrocktest rejects them otherwise, as
// Anthropic does. They still hold the answer: one past them is corrected.
func TestStructuredSaysUnsupportedConstraints(t *testing.T) {
	type reading struct {
		Level int8   `json:"level"`
		Note  string `json:"note"`
	}
	schema := `{"type":"object","additionalProperties":false,"properties":{"level":{"type":"integer","description":"{minimum: -128, maximum: 127}"},` +
		`"note":{"type":"string"}},"required":["level","note"]}`
	ctx := context.Background()
	t.Run("native answer schema", func(t *testing.T) {
		srv, client := serve(t, bedrocktest.Script(bedrocktest.Text(`{"level":300,"note":"high"}`), bedrocktest.Text(`{"level":100,"note":"high"}`)))
		got, res, err := converse.Structured[reading](ctx, converse.New(client, claude, nil), "How high?")
		require.NoError(t, err)
		assert.Equal(t, reading{Level: 100, Note: "high"}, got)
		assert.Equal(t, 2, res.Turns, "300 is past an int8's bound: corrected")
		js := srv.Requests()[0].OutputConfig.TextFormat.Structure.(*types.OutputFormatStructureMemberJsonSchema)
		assert.JSONEq(t, schema, aws.ToString(js.Value.Schema))
	})
	t.Run("strict tool", func(t *testing.T) {
		tool, err := tools.New("record", "Records a reading.", func(_ context.Context, in reading) (string, error) { return "ok", nil },
			func(o *tools.Options) { o.Strict = true })
		require.NoError(t, err)
		srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("ok")))
		_, err = converse.New(client, claude, registry(t, tool)).Send(ctx, "hi")
		require.NoError(t, err)
		spec := srv.Requests()[0].ToolConfig.Tools[0].(*types.ToolMemberToolSpec)
		sent, err := spec.Value.InputSchema.(*types.ToolInputSchemaMemberJson).Value.MarshalSmithyDocument()
		require.NoError(t, err)
		assert.JSONEq(t, schema, string(sent))
	})
}

// TestStructuredWithThinking: a structured Send beside extended thinking
// sends nothing Bedrock rejects on either path: bedrocktest checks the
// thinking parameters and the forcing toolChoice.
func TestStructuredWithThinking(t *testing.T) {
	thinking := document.NewLazyDocument(map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}})
	for _, model := range []string{claude, "us.anthropic.claude-3-7-sonnet-20250219-v1:0"} {
		t.Run(model, func(t *testing.T) {
			reply := bedrocktest.Text(valid)
			if model != claude {
				reply = bedrocktest.ToolUse("", call("f1", finalFn, valid))
			}
			srv, client := serve(t, bedrocktest.Script(reply))
			conv := converse.New(client, model, nil, func(o *converse.Options) {
				o.Request.AdditionalModelRequestFields = thinking
				o.Request.InferenceConfig = &types.InferenceConfiguration{MaxTokens: aws.Int32(4000)}
			})
			got, _, err := converse.Structured[forecast](context.Background(), conv, "Weather?")
			require.NoError(t, err)
			assert.Equal(t, forecast{City: "Oslo", Temp: 3}, got)
			assert.Len(t, srv.Requests(), 1)
		})
	}
}

// TestBeginStructured: a structured answer driven through the step API
// makes the requests StructuredJSON makes, the correction of an invalid
// answer included, on both paths, and ends with the answer's JSON.
func TestBeginStructured(t *testing.T) {
	schema := json.RawMessage(`{"title":"forecast","type":"object","properties":{"city":{"type":"string"},
		"temp":{"type":"integer"}},"required":["city","temp"]}`)
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			ctx := context.Background()
			script := func() bedrocktest.Handler { return bedrocktest.Script(p.answer("t1", invalid), p.answer("t2", valid)) }
			sendSrv, sendClient := serve(t, script())
			want, wantRes, err := converse.StructuredJSON(ctx, converse.New(sendClient, p.model, nil), "Weather in Oslo?", schema)
			require.NoError(t, err)

			stepSrv, stepClient := serve(t, script())
			c := converse.New(nil, p.model, nil)
			step, err := c.BeginStructured(ctx, types.Message{Content: []types.ContentBlock{text("Weather in Oslo?")}}, schema)
			res, err := driveFrom(ctx, c, engine{call: converseWith(stepClient)}, step, err)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), res.Text)
			assert.Equal(t, wantRes.StopReason, res.StopReason)
			assert.Equal(t, types.StopReasonEndTurn, res.StopReason)
			sent, driven := sendSrv.Requests(), stepSrv.Requests()
			require.Len(t, driven, 2)
			require.Len(t, sent, 2)
			for i := range sent {
				assert.JSONEq(t, string(sent[i].Body), string(driven[i].Body), "request %d", i+1)
			}
			assertValid(t, c, p.model)
		})
	}
	_, err := converse.New(nil, claude, nil).BeginStructured(context.Background(),
		types.Message{Content: []types.ContentBlock{text("x")}}, json.RawMessage(`{"type":"array"}`))
	require.ErrorIs(t, err, tools.ErrInvalidTool)
}
