package converse_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/tools"
)

// answer runs one call of tool with input through e and prints the text
// the model would read.
func answer(e *converse.Executor, tool string, input map[string]any) {
	ran := e.Run(context.Background(), converse.Call{ID: "t1", Tool: tool, Input: mustJSON(input)})
	r := ran.Result.(*types.ContentBlockMemberToolResult).Value
	fmt.Println(r.Status, r.Content[0].(*types.ToolResultContentBlockMemberText).Value)
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// A middleware redacts what looks like an AWS access key from every
// tool's output before the model sees it.
func ExampleToolMiddleware_redact() {
	lookup, _ := tools.New("lookup", "Looks a user up.", func(context.Context, struct{}) (map[string]string, error) {
		return map[string]string{"user": "ana", "key": "AKIAIOSFODNN7EXAMPLE"}, nil
	})
	reg, _ := tools.NewRegistry(lookup)
	accessKey := regexp.MustCompile(`AKIA[0-9A-Z]{16}`)
	redact := func(next converse.ToolHandler) converse.ToolHandler {
		return func(ctx context.Context, call converse.Call) (any, error) {
			v, err := next(ctx, call)
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			return json.RawMessage(accessKey.ReplaceAll(b, []byte("[redacted]"))), nil
		}
	}
	e := &converse.Executor{Registry: reg, ToolOptions: converse.ToolOptions{Middleware: []converse.ToolMiddleware{redact}}}
	answer(e, "lookup", map[string]any{})
	// Output:
	// success {"key":"[redacted]","user":"ana"}
}

// A middleware fixes a common mistake of models before the input is
// validated: a number sent as a string.
func ExampleToolMiddleware_fixInput() {
	reg, _ := tools.NewRegistry(tools.Calculator())
	numbers := func(next converse.ToolHandler) converse.ToolHandler {
		return func(ctx context.Context, call converse.Call) (any, error) {
			var in map[string]any
			if json.Unmarshal(call.Input, &in) == nil {
				for k, v := range in {
					if s, ok := v.(string); ok {
						if f, err := strconv.ParseFloat(s, 64); err == nil {
							in[k] = f
						}
					}
				}
				call.Input = mustJSON(in)
			}
			return next(ctx, call)
		}
	}
	e := &converse.Executor{Registry: reg, ToolOptions: converse.ToolOptions{Middleware: []converse.ToolMiddleware{numbers}}}
	answer(e, "calculator", map[string]any{"a": "2", "b": 40})
	// Output:
	// success 42
}

// A middleware retries a flaky tool with a back-off; all its attempts are
// inside the call's timeout, at which the call is answered whatever the
// middleware does.
func ExampleToolMiddleware_retry() {
	attempts := 0
	flaky, _ := tools.New("flaky", "Works the third time.", func(context.Context, struct{}) (string, error) {
		if attempts++; attempts < 3 {
			return "", errors.New("connection reset")
		}
		return fmt.Sprintf("worked at attempt %d", attempts), nil
	})
	reg, _ := tools.NewRegistry(flaky)
	retry := func(next converse.ToolHandler) converse.ToolHandler {
		return func(ctx context.Context, call converse.Call) (any, error) {
			for wait := time.Millisecond; ; wait *= 2 {
				v, err := next(ctx, call)
				if err == nil || ctx.Err() != nil {
					return v, err
				}
				select {
				case <-ctx.Done():
					return nil, err
				case <-time.After(wait):
				}
			}
		}
	}
	e := &converse.Executor{Registry: reg, ToolOptions: converse.ToolOptions{Middleware: []converse.ToolMiddleware{retry}}}
	answer(e, "flaky", map[string]any{})
	// Output:
	// success "worked at attempt 3"
}

// A middleware refuses a call with a message the model can act on; the
// tool does not run.
func ExampleToolMiddleware_refuse() {
	reg, _ := tools.NewRegistry(tools.Calculator())
	noDivision := func(next converse.ToolHandler) converse.ToolHandler {
		return func(ctx context.Context, call converse.Call) (any, error) {
			var in struct{ Operation string }
			if json.Unmarshal(call.Input, &in) == nil && in.Operation == "divide" {
				return nil, errors.New("division is not allowed here: multiply by the inverse instead")
			}
			return next(ctx, call)
		}
	}
	e := &converse.Executor{Registry: reg, ToolOptions: converse.ToolOptions{Middleware: []converse.ToolMiddleware{noDivision}}}
	answer(e, "calculator", map[string]any{"a": 1, "b": 4, "operation": "divide"})
	// Output:
	// error Error: division is not allowed here: multiply by the inverse instead
}
