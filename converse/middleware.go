package converse

import (
	"context"

	"github.com/tooluse/bedrock/tools"
)

// ToolHandler runs one tool call and returns what the tool returned. That is a
// value the executor encodes as JSON for the model (a tools.Result to send
// images or documents beside it). Or it is an error, which the model reads as
// an error result ("Error: " and the error's text).
type ToolHandler func(ctx context.Context, call Call) (any, error)

// ToolMiddleware wraps the handler of every call, as net/http handlers wrap
// each other. It sees the call: its ID, tool name and input, as the model sent
// it. It may change the input it hands next. It may answer without calling
// next (a refusal the model reads, a cached answer). It may call next more
// than once (a retry), or change the result next returns (redact it). Changing
// Call.ID or Call.Tool changes nothing: next runs the call's own tool,
// validating the input it is given against the tool's schema.
//
// The executor's guarantees hold around it. ctx carries the call's timeout,
// which bounds all the calls of next together. The call is answered at its
// deadline whatever the middleware does. A panic of the middleware is
// recovered as a panic of the tool is. The output it returns is capped as a
// tool's is. The call still gets exactly one result, in its place. next must
// be called on the middleware's own goroutine, and not after the middleware
// returned.
type ToolMiddleware func(next ToolHandler) ToolHandler

// handler is the tool's handler wrapped by the middleware, the first
// outermost. while is set to what is running when a panic is recovered:
// the middleware, or "" for the tool.
func (e *Executor) handler(tool *tools.Tool, while *string) ToolHandler {
	h := func(ctx context.Context, call Call) (any, error) {
		*while = ""
		v, err := tool.Call(ctx, call.Input)
		*while = " in a tool middleware" // not reached if the tool panics
		return v, err
	}
	for i := len(e.Middleware) - 1; i >= 0; i-- {
		h = e.Middleware[i](h)
	}
	*while = " in a tool middleware"
	return h
}
