package converse_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// flaky fails its first failures calls, then answers "ok"; calls counts
// them all.
func flaky(t *testing.T, failures int, calls *int) *tools.Registry {
	t.Helper()
	tool, err := tools.New("flaky", "Fails, then works.", func(context.Context, struct{}) (string, error) {
		*calls++
		if *calls <= failures {
			return "", errors.New("try again")
		}
		return "ok", nil
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(tool)
	require.NoError(t, err)
	return reg
}

// backoff retries a failing call after 1 s, 2 s, 4 s, ... until it
// succeeds or its context ends.
func backoff(next converse.ToolHandler) converse.ToolHandler {
	return func(ctx context.Context, call converse.Call) (any, error) {
		for wait := time.Second; ; wait *= 2 {
			v, err := next(ctx, call)
			if err == nil {
				return v, nil
			}
			select {
			case <-ctx.Done():
				return nil, err
			case <-time.After(wait):
			}
		}
	}
}

// TestMiddlewareRetriesWithinTheTimeout: every call of next is inside the
// call's timeout. In virtual time, a tool that always fails is called at 0, 1,
// 3 and 7 s and the call answered as timed out at 10 s. One that fails twice
// is answered with its third answer.
func TestMiddlewareRetriesWithinTheTimeout(t *testing.T) {
	tests := []struct {
		failures, calls int
		want            result
	}{
		{failures: 2, calls: 3, want: result{ID: "t1", Text: `"ok"`, Status: "success"}},
		{failures: 100, calls: 4, want: result{ID: "t1", Text: `Error: tool "flaky" timed out after 10s: context deadline exceeded`, Status: "error"}},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			calls := 0
			e := &converse.Executor{Registry: flaky(t, tt.failures, &calls), ToolOptions: converse.ToolOptions{
				Timeout:    10 * time.Second,
				Middleware: []converse.ToolMiddleware{backoff},
			}}
			got := e.Execute(context.Background(), []types.ContentBlock{toolUse("t1", "flaky", map[string]any{})})
			synctest.Wait() // the abandoned retry loop ends with its context
			assert.Equal(t, []result{tt.want}, results(t, got))
			assert.Equal(t, tt.calls, calls)
		})
	}
}

// TestMiddlewareOrderAndShape: the first middleware is outermost; one can
// change the input, answer without the tool, and change the result, whose
// output is capped as a tool's is.
func TestMiddlewareOrderAndShape(t *testing.T) {
	var order []string
	trace := func(name string) converse.ToolMiddleware {
		return func(next converse.ToolHandler) converse.ToolHandler {
			return func(ctx context.Context, call converse.Call) (any, error) {
				order = append(order, name)
				return next(ctx, call)
			}
		}
	}
	fix := func(next converse.ToolHandler) converse.ToolHandler { // a = "20" becomes 20
		return func(ctx context.Context, call converse.Call) (any, error) {
			var in map[string]any
			if json.Unmarshal(call.Input, &in) == nil {
				if s, ok := in["a"].(string); ok {
					var n json.Number = json.Number(s)
					in["a"] = n
					call.Input, _ = json.Marshal(in)
				}
			}
			return next(ctx, call)
		}
	}
	refuse := func(next converse.ToolHandler) converse.ToolHandler {
		return func(ctx context.Context, call converse.Call) (any, error) {
			if call.ID == "no" {
				return nil, errors.New("refused: not on Sundays")
			}
			return next(ctx, call)
		}
	}
	long := func(next converse.ToolHandler) converse.ToolHandler {
		return func(ctx context.Context, call converse.Call) (any, error) {
			if call.ID == "long" {
				return strings.Repeat("x", 50), nil
			}
			return next(ctx, call)
		}
	}
	e := &converse.Executor{Registry: calculator(t), ToolOptions: converse.ToolOptions{
		MaxOutput:   40,
		Concurrency: 1, // order is appended to by each call in turn
		Middleware:  []converse.ToolMiddleware{trace("outer"), trace("inner"), fix, refuse, long},
	}}
	got := e.Execute(context.Background(), []types.ContentBlock{
		toolUse("fixed", "calculator", map[string]any{"a": "20", "b": 1}),
		toolUse("no", "calculator", map[string]any{"a": 1, "b": 1}),
		toolUse("long", "calculator", map[string]any{"a": 1, "b": 1}),
	})
	assert.Equal(t, []result{
		{ID: "fixed", Text: "21", Status: "success"},
		{ID: "no", Text: "Error: refused: not on Sundays", Status: "error"},
		{ID: "long", Text: `"` + strings.Repeat("x", 39) + `… [truncated: 52 bytes, first 40 kept]`, Status: "success"},
	}, results(t, got))
	assert.Equal(t, []string{"outer", "inner", "outer", "inner", "outer", "inner"}, order)
}

// TestMiddlewarePanics: a middleware that panics gets its call an error
// result saying so, and the conversation goes on to its answer.
func TestMiddlewarePanics(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "c1", Name: "calculator", Input: map[string]any{"a": 1, "b": 2}}),
		bedrocktest.Text("the middleware failed"),
	))
	boom := func(next converse.ToolHandler) converse.ToolHandler {
		return func(context.Context, converse.Call) (any, error) { panic("boom") }
	}
	res, err := converse.New(client, claude, calculator(t), func(o *converse.Options) {
		o.Tools.Middleware = []converse.ToolMiddleware{boom}
	}).Send(context.Background(), "add")

	require.NoError(t, err)
	assert.Equal(t, "the middleware failed", res.Text)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, []result{{ID: "c1", Text: `Error: tool panicked: tool "calculator" in a tool middleware: boom`, Status: "error"}},
		resultsOf(t, reqs[1].Messages[2]))
}
