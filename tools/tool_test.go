package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
)

type weatherInput struct {
	City  string `json:"city" jsonschema:"the city to report on"`
	Days  int    `json:"days,omitempty" jsonschema:"how many days ahead"`
	Units string `json:"units,omitempty"`
}

type weatherOutput struct {
	Report string `json:"report"`
}

// newWeather returns a typed tool and a counter of the calls that reached fn.
func newWeather(t *testing.T, opts ...func(*tools.Options)) (*tools.Tool, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	tool, err := tools.New("get_weather", "Reports the weather.",
		func(_ context.Context, in weatherInput) (weatherOutput, error) {
			calls.Add(1)
			return weatherOutput{Report: in.City + " " + in.Units}, nil
		}, opts...)
	require.NoError(t, err)
	return tool, &calls
}

func TestNewInfersSchema(t *testing.T) {
	tool, _ := newWeather(t)
	assert.Equal(t, "get_weather", tool.Name())
	assert.Equal(t, "Reports the weather.", tool.Description())

	var schema struct {
		Type       string                     `json:"type"`
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
		Additional *bool                      `json:"additionalProperties"`
	}
	require.NoError(t, json.Unmarshal(tool.InputSchema(), &schema))
	assert.Equal(t, "object", schema.Type)
	assert.Equal(t, []string{"city"}, schema.Required, "omitempty fields are optional")
	assert.JSONEq(t, `{"type":"string","description":"the city to report on"}`, string(schema.Properties["city"]))
	assert.JSONEq(t, `{"type":"integer","description":"how many days ahead"}`, string(schema.Properties["days"]))
	require.NotNil(t, schema.Additional)
	assert.False(t, *schema.Additional)

	// The schema returned is a copy.
	s := tool.InputSchema()
	s[0] = 'X'
	assert.True(t, json.Valid(tool.InputSchema()))
}

func TestNewCall(t *testing.T) {
	tool, calls := newWeather(t)
	out, err := tool.Call(context.Background(), json.RawMessage(`{"city":"Paris","units":"metric","days":2}`))
	require.NoError(t, err)
	assert.Equal(t, weatherOutput{Report: "Paris metric"}, out)
	assert.Equal(t, int32(1), calls.Load())
}

func TestCallRejectsBadInput(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		reason string
	}{
		{"array", `[1]`, "not a JSON object"},
		{"string", `"x"`, "not a JSON object"},
		{"null", `null`, "not a JSON object"},
		{"number", `42`, "not a JSON object"},
		{"malformed", `{"city":`, "malformed JSON: unexpected end of JSON input"},
		{"trailing garbage", `{"city":"x"} {}`, "malformed JSON"},
		{"empty means {}", ``, `missing required property "city"`},
		{"missing required", `{"units":"metric"}`, `missing required property "city"`},
		{"wrong type", `{"city":3}`, `property "city": want string, got integer`},
		{"fraction for integer", `{"city":"x","days":1.5}`, `property "days": want integer, got number`},
		{"unknown property", `{"city":"x","color":"red"}`, `unexpected property "color"`},
		{"several problems", `{"days":"two","b":1,"a":2}`,
			`property "days": want integer, got string; unexpected properties "a", "b"; missing required property "city"`},
		{"a name twice", `{"city":"../etc","city":"x"}`, `property "city" given twice`},
		{"a name twice, once escaped", `{"city":"x","\u0063ity":"y"}`, `property "city" given twice`},
		{"a number out of range", `{"city":"x","days":1e400}`, `want number of at most 1.7976931348623157e+308 in magnitude, got 1e400`},
		{"a huge unknown property", `{"city":"x","` + strings.Repeat("x", 1<<20) + `":1}`, `unexpected property "xxx`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, calls := newWeather(t)
			_, err := tool.Call(context.Background(), json.RawMessage(tt.input))
			var inErr *tools.InputError
			require.ErrorAs(t, err, &inErr)
			assert.ErrorIs(t, err, tools.ErrInvalidInput)
			assert.Equal(t, "get_weather", inErr.Tool)
			assert.Contains(t, inErr.Reason, tt.reason)
			assert.Equal(t, "invalid input: "+inErr.Reason, err.Error())
			assert.LessOrEqual(t, len(inErr.Reason), 2<<10+32, "the reason quotes the input, cut short")
			assert.Zero(t, calls.Load(), "fn must not run on invalid input")
		})
	}
}

// TestRawToolGetsWhatWasValidated: the JSON a NewRaw tool (or a Command's
// program) reads is the JSON the schema checked. A name given twice is
// refused: encoding/json reads it as its last value, another reader as its
// first. Bytes that are not UTF-8 reach it as U+FFFD, as the validator saw
// them.
func TestRawToolGetsWhatWasValidated(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","pattern":"^[a-z\ufffd]+$"}},"additionalProperties":false}`)
	var got []string
	tool, err := tools.NewRaw("read", "Reads.", schema, func(_ context.Context, in json.RawMessage) (any, error) {
		got = append(got, string(in))
		return "ok", nil
	})
	require.NoError(t, err)
	for _, in := range []string{`{"path":"../../etc/passwd","path":"safe"}`, `{"a":{"path":"x"},"path":"x","path":"y"}`} {
		_, err = tool.Call(context.Background(), json.RawMessage(in))
		require.ErrorIs(t, err, tools.ErrInvalidInput, in)
		assert.Contains(t, err.Error(), `property "path" given twice`)
	}
	_, err = tool.Call(context.Background(), json.RawMessage("{\"path\":\"ab\xffc\"}"))
	require.NoError(t, err)
	assert.Equal(t, []string{"{\"path\":\"ab\ufffdc\"}"}, got)
}

// TestEscapedDefaultIsFilledIn: a "default" written with an escape in a
// NewRaw schema is a default all the same.
func TestEscapedDefaultIsFilledIn(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","\u0064efault":7}}}`)
	var got json.RawMessage
	tool, err := tools.NewRaw("d", "Has a default.", schema, func(_ context.Context, in json.RawMessage) (any, error) { got = in; return "ok", nil })
	require.NoError(t, err)
	_, err = tool.Call(context.Background(), json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"n":7}`, string(got))
}

func TestDefaultsReachTheFunction(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","default":"anon"},
		"count":{"type":"integer","default":3},
		"big":{"type":"integer"}}}`)
	var got json.RawMessage
	raw, err := tools.NewRaw("raw", "Echoes its input.", schema, func(_ context.Context, in json.RawMessage) (any, error) {
		got = in
		return "ok", nil
	})
	require.NoError(t, err)

	_, err = raw.Call(context.Background(), json.RawMessage(`{"count":5,"big":9007199254740993}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"anon","count":5,"big":9007199254740993}`, string(got))
	assert.Contains(t, string(got), "9007199254740993", "large integers keep their digits")

	_, err = raw.Call(context.Background(), nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"anon","count":3}`, string(got))

	_, err = raw.Call(context.Background(), json.RawMessage(`{"name":"<b>&</b>"}`))
	require.NoError(t, err)
	assert.Contains(t, string(got), `"<b>&</b>"`, "HTML characters are not escaped")
}

func TestNewRawRejectsBadInput(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)
	var calls atomic.Int32
	raw, err := tools.NewRaw("sum", "Adds.", schema, func(context.Context, json.RawMessage) (any, error) {
		calls.Add(1)
		return nil, nil
	})
	require.NoError(t, err)
	_, err = raw.Call(context.Background(), json.RawMessage(`{"a":"1"}`))
	require.EqualError(t, err, `invalid input: property "a": want number, got string; missing required property "b"`)
	assert.Zero(t, calls.Load())
}

func TestTypedDefaults(t *testing.T) {
	// A map input takes any properties; defaults come from a NewRaw schema in
	// TestDefaultsReachTheFunction and from the built-ins in builtin_test.go.
	tool, err := tools.New("count", "Counts properties.", func(_ context.Context, in map[string]int) (int, error) {
		return len(in), nil
	})
	require.NoError(t, err)
	out, err := tool.Call(context.Background(), json.RawMessage(`{"a":1,"b":2}`))
	require.NoError(t, err)
	assert.Equal(t, 2, out)
	_, err = tool.Call(context.Background(), json.RawMessage(`{"a":"x"}`))
	assert.ErrorIs(t, err, tools.ErrInvalidInput)
}

func TestDecodeErrorIsInputError(t *testing.T) {
	// The schema says only "string"; decoding into time.Time says more.
	tool, err := tools.New("when", "Takes a time.", func(_ context.Context, in struct {
		At time.Time `json:"at"`
	}) (string, error) {
		return in.At.String(), nil
	})
	require.NoError(t, err)
	_, err = tool.Call(context.Background(), json.RawMessage(`{"at":"yesterday"}`))
	var inErr *tools.InputError
	require.ErrorAs(t, err, &inErr)
	assert.Equal(t, "when", inErr.Tool)
	assert.Contains(t, inErr.Reason, "yesterday")
}

func TestFunctionErrorIsReturned(t *testing.T) {
	boom := errors.New("boom")
	tool, err := tools.New("fail", "Fails.", func(context.Context, struct{}) (string, error) {
		return "ignored", boom
	})
	require.NoError(t, err)
	out, err := tool.Call(context.Background(), json.RawMessage(`{}`))
	assert.Nil(t, out)
	assert.Same(t, boom, err)
}

func TestConstructorsValidate(t *testing.T) {
	okFn := func(context.Context, struct{}) (int, error) { return 0, nil }
	rawFn := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	object := json.RawMessage(`{"type":"object"}`)
	tests := []struct {
		name string
		make func() (*tools.Tool, error)
		want string
	}{
		{"empty name", func() (*tools.Tool, error) { return tools.New("", "d", okFn) }, `tools: invalid tool "": name must match`},
		{"space in name", func() (*tools.Tool, error) { return tools.New("a b", "d", okFn) }, `name must match`},
		{"65 characters", func() (*tools.Tool, error) { return tools.New(strings.Repeat("a", 65), "d", okFn) }, `name must match`},
		{"dot in name", func() (*tools.Tool, error) { return tools.NewRaw("a.b", "d", object, rawFn) }, `name must match`},
		{"empty description", func() (*tools.Tool, error) { return tools.New("a", " \n", okFn) }, `tools: invalid tool "a": empty description`},
		{"nil typed fn", func() (*tools.Tool, error) { return tools.New[struct{}, int]("a", "d", nil) }, `nil function`},
		{"nil raw fn", func() (*tools.Tool, error) { return tools.NewRaw("a", "d", object, nil) }, `nil function`},
		{"string input type", func() (*tools.Tool, error) {
			return tools.New("a", "d", func(context.Context, string) (int, error) { return 0, nil })
		}, `type must be "object", got string`},
		{"pointer input type", func() (*tools.Tool, error) {
			return tools.New("a", "d", func(context.Context, *weatherInput) (int, error) { return 0, nil })
		}, `type must be "object", got null, object`},
		{"uninferable input type", func() (*tools.Tool, error) {
			return tools.New("a", "d", func(context.Context, struct{ F func() }) (int, error) { return 0, nil })
		}, `input type`},
		{"schema without type", func() (*tools.Tool, error) {
			return tools.NewRaw("a", "d", json.RawMessage(`{"properties":{"x":{}}}`), rawFn)
		}, `type must be "object", got none`},
		{"array schema", func() (*tools.Tool, error) { return tools.NewRaw("a", "d", json.RawMessage(`{"type":"array"}`), rawFn) }, `got array`},
		{"boolean schema", func() (*tools.Tool, error) { return tools.NewRaw("a", "d", json.RawMessage(`true`), rawFn) }, `got none`},
		{"malformed schema", func() (*tools.Tool, error) { return tools.NewRaw("a", "d", json.RawMessage(`{`), rawFn) }, `input schema`},
		{"bad default", func() (*tools.Tool, error) {
			return tools.NewRaw("a", "d", json.RawMessage(`{"type":"object","properties":{"x":{"type":"integer","default":"no"}}}`), rawFn)
		}, `input schema`},
		{"remote ref", func() (*tools.Tool, error) {
			return tools.NewRaw("a", "d", json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}}}`), rawFn)
		}, `input schema`},
		{"negative timeout", func() (*tools.Tool, error) {
			return tools.New("a", "d", okFn, func(o *tools.Options) { o.Timeout = -time.Second })
		}, `negative timeout`},
		{"negative output limit", func() (*tools.Tool, error) {
			return tools.New("a", "d", okFn, func(o *tools.Options) { o.MaxOutput = -1 })
		}, `negative output limit -1`},
		{"negative command output limit", func() (*tools.Tool, error) {
			return tools.Command("a", "d", object, []string{"true"}, func(o *tools.Options) { o.MaxOutput = -1 })
		}, `negative output limit -1`},
		{"empty argv", func() (*tools.Tool, error) { return tools.Command("a", "d", object, nil) }, `empty command`},
		{"empty program", func() (*tools.Tool, error) { return tools.Command("a", "d", object, []string{""}) }, `empty command`},
		{"env for a typed tool", func() (*tools.Tool, error) {
			return tools.New("a", "d", okFn, func(o *tools.Options) { o.Env = map[string]string{"A": "b"} })
		}, `Env and InheritEnv are for Command tools only`},
		{"inherited env for a raw tool", func() (*tools.Tool, error) {
			return tools.NewRaw("a", "d", object, rawFn, func(o *tools.Options) { o.InheritEnv = []string{"HOME"} })
		}, `Env and InheritEnv are for Command tools only`},
		{"empty env name", func() (*tools.Tool, error) {
			return tools.Command("a", "d", object, []string{"true"}, func(o *tools.Options) { o.Env = map[string]string{"": "x"} })
		}, `environment variable name ""`},
		{"env name with =", func() (*tools.Tool, error) {
			return tools.Command("a", "d", object, []string{"true"}, func(o *tools.Options) { o.InheritEnv = []string{"A=B"} })
		}, `environment variable name "A=B"`},
		{"env value with NUL", func() (*tools.Tool, error) {
			return tools.Command("a", "d", object, []string{"true"}, func(o *tools.Options) { o.Env = map[string]string{"A": "x\x00y"} })
		}, `environment variable "A": value contains a NUL byte`},
		{"command with a bad name", func() (*tools.Tool, error) { return tools.Command("a b", "d", object, []string{"true"}) }, `name must match`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := tt.make()
			assert.Nil(t, tool)
			require.ErrorIs(t, err, tools.ErrInvalidTool)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestOptions(t *testing.T) {
	plain, _ := newWeather(t)
	assert.Zero(t, plain.Timeout())
	assert.False(t, plain.Speculative())
	assert.Zero(t, plain.MaxOutput())

	tuned, _ := newWeather(t, func(o *tools.Options) {
		o.Timeout = time.Minute
		o.Speculative = true
	}, nil, func(o *tools.Options) { o.MaxOutput = 4096 })
	assert.Equal(t, time.Minute, tuned.Timeout())
	assert.Equal(t, 4096, tuned.MaxOutput())
	assert.True(t, tuned.Speculative())
}

func TestZeroToolCallFails(t *testing.T) {
	var zero tools.Tool
	_, err := zero.Call(context.Background(), json.RawMessage(`{}`))
	require.Error(t, err)
	var nilTool *tools.Tool
	_, err = nilTool.Call(context.Background(), json.RawMessage(`{}`))
	require.Error(t, err)
}

func TestConcurrentCalls(t *testing.T) {
	tool, calls := newWeather(t)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			input := `{"city":"x"}`
			if i%2 == 1 {
				input = `{"city":1,"zz":2}`
			}
			_, err := tool.Call(context.Background(), json.RawMessage(input))
			if i%2 == 1 {
				assert.ErrorIs(t, err, tools.ErrInvalidInput)
			} else {
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(25), calls.Load())
}

// TestCheckedOfNoTool: the zero Checked, which no tool checked, runs
// nothing.
func TestCheckedOfNoTool(t *testing.T) {
	_, err := tools.Checked{}.Call(context.Background())
	require.ErrorContains(t, err, "no tool checked")
	var nilTool *tools.Tool
	_, err = nilTool.CheckInput(json.RawMessage(`{}`))
	require.Error(t, err)
}
