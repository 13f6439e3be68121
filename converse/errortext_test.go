package converse_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/tools"
)

// failingJSON's MarshalJSON fails, as a tool's output type may.
type failingJSON struct{}

func (failingJSON) MarshalJSON() ([]byte, error) { return nil, errors.New("no encoding today") }

// goTypeName matches what a Go type or package-qualified name looks like in
// a text: *tools.InputError, converse.nilError, json.Number, main.T.
var goTypeName = regexp.MustCompile(`\*?\b[a-z][a-z0-9]*\.[A-Za-z_]\w*\b`)

// goPrefix matches a Go error's package prefix, which starts a message or
// follows another message's colon.
var goPrefix = regexp.MustCompile(`(^|: )(converse|tools|json|runtime|bedrocktest): `)

// TestErrorTextsForTheModel: every kind of failed call is answered with a text
// in one style, "Error: " and what went wrong. The text has neither the Go
// prefixes of the errors for callers ("converse:", "tools:", "json:") nor Go
// type names.
func TestErrorTextsForTheModel(t *testing.T) {
	mk := func(tool *tools.Tool, err error) *tools.Tool {
		t.Helper()
		require.NoError(t, err)
		return tool
	}
	type weatherIn struct {
		City string `json:"city"`
		Days int    `json:"days,omitempty"`
	}
	reg, err := tools.NewRegistry(
		mk(tools.New("weather", "Reports the weather.", func(context.Context, weatherIn) (string, error) { return "sunny", nil })),
		mk(tools.New("fail", "Fails.", func(context.Context, struct{}) (string, error) {
			return "", errors.New("the disk is full")
		})),
		mk(tools.New("panic", "Panics.", func(context.Context, struct{}) (string, error) { panic("kaboom") })),
		mk(tools.New("index", "Panics with a runtime error.", func(_ context.Context, in struct {
			I int `json:"i"`
		}) (int, error) {
			var xs []int
			return xs[in.I], nil
		})),
		mk(tools.New("typed_nil", "Returns a nil *nilError.", func(context.Context, struct{}) (string, error) {
			var err *nilError
			return "", err
		})),
		mk(tools.New("hang", "Waits for its context.", func(ctx context.Context, _ struct{}) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}, func(o *tools.Options) { o.Timeout = 10 * time.Millisecond })),
		mk(tools.New("nan", "Returns NaN.", func(context.Context, struct{}) (float64, error) { return math.NaN(), nil })),
		mk(tools.New("chan", "Returns a channel.", func(context.Context, struct{}) (chan int, error) { return make(chan int), nil })),
		mk(tools.New("marshal_fails", "Returns output that cannot encode itself.", func(context.Context, struct{}) (failingJSON, error) {
			return failingJSON{}, nil
		})),
		mk(tools.New("long_error", "Fails at length.", func(context.Context, struct{}) (string, error) {
			return "", errors.New("a very long explanation of what went wrong")
		}, func(o *tools.Options) { o.MaxOutput = 20 })),
	)
	require.NoError(t, err)
	if runtime.GOOS != "windows" {
		require.NoError(t, reg.Add(mk(tools.Command("exits", "Exits with status 3.", json.RawMessage(`{"type":"object"}`),
			[]string{"/bin/sh", "-c", "echo broken >&2; exit 3"}))))
	}

	tests := []struct {
		name  string
		calls []types.ContentBlock
		ctx   func() context.Context
		want  string // a part of the text
	}{
		{"unknown tool", []types.ContentBlock{toolUse("1", "nope", map[string]any{})}, nil, `unknown tool "nope"`},
		{"input of the wrong type", []types.ContentBlock{toolUse("1", "weather", map[string]any{"city": 1})}, nil, `property "city"`},
		{"input out of an integer's range", []types.ContentBlock{toolUse("1", "weather", map[string]any{"city": "Paris", "days": 1.5})}, nil, `"days"`},
		{"input that is not an object", []types.ContentBlock{toolUse("1", "weather", []any{1})}, nil, `not a JSON object`},
		{"tool error", []types.ContentBlock{toolUse("1", "fail", map[string]any{})}, nil, `the disk is full`},
		{"panic", []types.ContentBlock{toolUse("1", "panic", map[string]any{})}, nil, `kaboom`},
		{"runtime panic", []types.ContentBlock{toolUse("1", "index", map[string]any{"i": 3})}, nil, `index out of range`},
		{"error whose text panics", []types.ContentBlock{toolUse("1", "typed_nil", map[string]any{})}, nil, `while its error was read`},
		{"timeout", []types.ContentBlock{toolUse("1", "hang", map[string]any{})}, nil, `timed out after 10ms`},
		{"cancellation", []types.ContentBlock{toolUse("1", "hang", map[string]any{})}, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, `was cancelled`},
		{"unsupported value", []types.ContentBlock{toolUse("1", "nan", map[string]any{})}, nil, `unsupported value NaN`},
		{"unsupported type", []types.ContentBlock{toolUse("1", "chan", map[string]any{})}, nil, `JSON cannot represent`},
		{"failing MarshalJSON", []types.ContentBlock{toolUse("1", "marshal_fails", map[string]any{})}, nil, `its MarshalJSON method failed: no encoding today`},
		{"duplicate toolUseId", []types.ContentBlock{toolUse("1", "weather", map[string]any{"city": "Paris"}), toolUse("1", "weather", map[string]any{"city": "Oslo"})}, nil, `already answered`},
		{"truncated", []types.ContentBlock{toolUse("1", "long_error", map[string]any{})}, nil, `[truncated:`},
	}
	if runtime.GOOS != "windows" {
		tests = append(tests, struct {
			name  string
			calls []types.ContentBlock
			ctx   func() context.Context
			want  string
		}{"command exit status", []types.ContentBlock{toolUse("1", "exits", map[string]any{})}, nil, `broken`})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx()
			}
			e := &converse.Executor{Registry: reg}
			got := results(t, e.Execute(ctx, tt.calls))
			last := got[len(got)-1]
			assert.Equal(t, types.ToolResultStatusError, last.Status)
			assert.Regexp(t, `^Error: [^:]`, last.Text)
			assert.Contains(t, last.Text, tt.want)
			assert.NotRegexp(t, goPrefix, last.Text)
			assert.Empty(t, goTypeName.FindAllString(last.Text, -1), "Go names in %q", last.Text)
		})
	}
}
