package lambdatool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/internal/modelerr"
)

// Function is the Lambda function a tool invokes, and what the tool tells
// the operator about it.
type Function struct {
	// Name is the function's name ("resize"), ARN or partial ARN, with or
	// without a version or alias suffix ("resize:live"). Required.
	Name string
	// Qualifier is a version or alias to invoke; empty invokes what Name
	// says, $LATEST if it names none.
	Qualifier string
	// Logger receives hints for the operator that the model is not shown,
	// such as what to check when access to the function is denied; nil
	// discards them.
	Logger *slog.Logger
	// TraceContext adds the trace context of a call's ctx to carrier, which
	// the function receives in ClientContext.custom. Nil means
	// OpenTelemetry's global propagator (otel.GetTextMapPropagator), which
	// adds "traceparent" and "tracestate" when ctx carries a span and a
	// propagator was set with otel.SetTextMapPropagator, and nothing
	// otherwise. It cannot replace the keys the package sets itself; an
	// entry that would take the client context over Lambda's limit is left
	// out.
	TraceContext func(ctx context.Context, carrier map[string]string)
}

// NewRaw makes a tool that invokes fn through client, its input described by
// schema, an object schema as for [tools.NewRaw]. Each call validates the
// input, fills in the schema's defaults and invokes the function with the
// input object as the payload; the function's JSON response is the call's
// output. opts configure the tool as for [tools.NewRaw]: a timeout, the
// output limit, speculative starts.
func NewRaw(client *lambda.Client, fn Function, name, description string, schema json.RawMessage, opts ...func(*tools.Options)) (*tools.Tool, error) {
	inv, err := newInvoker(client, fn, name)
	if err != nil {
		return nil, err
	}
	t, err := tools.NewRaw(name, description, schema, func(ctx context.Context, input json.RawMessage) (any, error) {
		return inv.invoke(ctx, input)
	}, opts...)
	inv.tool = t
	return t, err
}

// New makes a tool that invokes fn through client, with an input schema
// inferred from In as [tools.New] infers it. Each call validates the input,
// decodes it into an In and invokes the function with the In encoded as JSON
// as the payload; the function's JSON response is the call's output.
func New[In any](client *lambda.Client, fn Function, name, description string, opts ...func(*tools.Options)) (*tools.Tool, error) {
	inv, err := newInvoker(client, fn, name)
	if err != nil {
		return nil, err
	}
	t, err := tools.New(name, description, func(ctx context.Context, in In) (json.RawMessage, error) {
		payload, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("the input could not be encoded for the function: %w", err)
		}
		return inv.invoke(ctx, payload)
	}, opts...)
	inv.tool = t
	return t, err
}

// invoker invokes one tool's function.
type invoker struct {
	client *lambda.Client
	fn     Function
	name   string
	logger *slog.Logger
	tool   *tools.Tool // set once made, before any call; for its output limit
}

func newInvoker(client *lambda.Client, fn Function, name string) (*invoker, error) {
	if client == nil {
		return nil, fmt.Errorf("lambdatool: tool %q: no Lambda client: %w", name, tools.ErrInvalidTool)
	}
	if strings.TrimSpace(fn.Name) == "" {
		return nil, fmt.Errorf("lambdatool: tool %q: no function name: %w", name, tools.ErrInvalidTool)
	}
	logger := fn.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &invoker{client: client, fn: fn, name: name, logger: logger}, nil
}

// invoke makes one synchronous invocation and judges its response. Every
// error it returns is worded for the model.
func (inv *invoker) invoke(ctx context.Context, payload json.RawMessage) (json.RawMessage, error) {
	in := &lambda.InvokeInput{
		FunctionName:   aws.String(inv.fn.Name),
		InvocationType: types.InvocationTypeRequestResponse,
		Payload:        payload,
		ClientContext:  aws.String(inv.clientContext(ctx)),
	}
	if inv.fn.Qualifier != "" {
		in.Qualifier = aws.String(inv.fn.Qualifier)
	}
	out, err := inv.client.Invoke(ctx, in)
	if err != nil {
		return nil, inv.invokeError(ctx, err)
	}
	if out.FunctionError != nil {
		return nil, newFunctionError(*out.FunctionError, out.Payload)
	}
	return checkResponse(out.Payload, responseLimit(inv.tool.MaxOutput()))
}

// invokeError words a failed Invoke for the model, and logs what the
// operator should know.
func (inv *invoker) invokeError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return modelerr.Errorf(ctxErr, "the invocation was abandoned (%v); the function may still run", ctxErr)
	}
	var throttled *types.TooManyRequestsException
	if errors.As(err, &throttled) {
		text := "the function is throttled: too many requests"
		if throttled.Reason != "" {
			text += " (" + string(throttled.Reason) + ")"
		}
		if after := aws.ToString(throttled.RetryAfterSeconds); after != "" {
			text += "; Lambda says to retry after " + after + " seconds"
		}
		return modelerr.Errorf(err, "%s", text)
	}
	if isAccessDenied(err) {
		inv.logger.Warn("lambdatool: access to the function was denied: the credentials of the Lambda client need lambda:InvokeFunction on it (and the function's resource policy must allow them, across accounts)",
			"tool", inv.name, "function", inv.fn.Name, "qualifier", inv.fn.Qualifier, "error", err)
		return modelerr.Errorf(err, "access to the function was denied")
	}
	inv.logger.Warn("lambdatool: the function could not be invoked", "tool", inv.name, "function", inv.fn.Name, "error", err)
	return modelerr.Errorf(err, "the function could not be invoked: %s", apiErrorText(err))
}
