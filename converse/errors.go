package converse

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Errors returned by the conversation loop. They arrive wrapped with the turn
// number ("converse: turn 3: ..."), so test for them with errors.Is.
var (
	// ErrMaxTurns means the model was still asking for tools when the turn
	// limit (Options.MaxTurns) was reached. The reply is not kept, and the
	// task is stopped (see Conversation.Stop).
	ErrMaxTurns = errors.New("turn limit reached")
	// ErrMaxTokens means the model ran out of output tokens in the middle of
	// a tool call. The cut-off call is not run; raise the max tokens of the
	// inference configuration.
	ErrMaxTokens = errors.New("max tokens reached inside a tool call")
	// ErrMalformedToolUse is the stop reason malformed_tool_use: the model
	// produced a tool call Bedrock could not parse.
	ErrMalformedToolUse = errors.New("model produced a malformed tool call")
	// ErrMalformedModelOutput is the stop reason malformed_model_output.
	ErrMalformedModelOutput = errors.New("model produced malformed output")
	// ErrContextWindowExceeded is the stop reason
	// model_context_window_exceeded, or Bedrock's ValidationException
	// saying the input is too long (which it wraps): the conversation no
	// longer fits the model's context window, and Options.Context did not
	// trim it (it is not set, or there was nothing left to drop).
	ErrContextWindowExceeded = errors.New("model context window exceeded")
	// ErrStreamTruncated means a ConverseStream response ended before its
	// messageStop event. The SDK does not report this; the loop does, and it
	// never runs tool calls from such a turn.
	ErrStreamTruncated = errors.New("stream ended before messageStop")
)

// Errors that describe why a tool call failed. A failed call is not a Go
// error of the loop: it is answered with an error toolResult so the model can
// adjust. These values appear in ToolEnd events (ToolEnd.Err), where
// observers can test them with errors.Is.
var (
	// ErrUnknownTool: the model asked for a tool the registry does not hold.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrToolPanic: the tool panicked; the panic was recovered.
	ErrToolPanic = errors.New("tool panicked")
	// ErrToolOutput: the tool's output cannot be encoded as JSON.
	ErrToolOutput = errors.New("tool output is not JSON")
	// ErrDuplicateID: the toolUseId was already used in the same turn.
	ErrDuplicateID = errors.New("duplicate toolUseId")
	// ErrCallInterrupted: the call was running when the conversation
	// stopped (a crash, say); Resume answers it without running it again.
	ErrCallInterrupted = errors.New("the call was interrupted before it returned; it was not run again and may or may not have taken effect")
)

// Retryable reports whether err, from a model call, a step of the step API
// or a Send, is worth trying again unchanged: Bedrock throttling, a server
// fault (InternalServerException, ServiceUnavailableException, a 5xx), a
// model not ready or timed out, a broken stream or a transport failure.
// Validation, access denied, not found, quota and conflict errors, the
// loop's own (ErrMaxTurns, ErrMaxTokens inside a call, ErrInvalidAnswer,
// ErrToolChoice, bad decisions, a pause) and cancellation are not: another
// try would fail the same way. It is the classification an engine that
// owns retries (such as a Temporal activity's retry policy) needs; the
// SDK's own retryer already makes its attempts before a Send sees an error.
func Retryable(err error) bool {
	var canceled *smithy.CanceledError // the caller's context ended
	if err == nil || errors.As(err, &canceled) {
		return false
	}
	// A request that never got an answer (refused, reset, or past the HTTP
	// client's own Timeout, which errors.Is takes for a deadline) is worth
	// another try; the SDK wraps it in a response error of status 0.
	var send *smithyhttp.RequestSendError
	if errors.As(err, &send) {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var (
		throttling  *types.ThrottlingException
		internal    *types.InternalServerException
		unavailable *types.ServiceUnavailableException
		notReady    *types.ModelNotReadyException
		timeout     *types.ModelTimeoutException
		streamErr   *types.ModelStreamErrorException
	)
	switch {
	case errors.As(err, &throttling), errors.As(err, &internal), errors.As(err, &unavailable),
		errors.As(err, &notReady), errors.As(err, &timeout), errors.As(err, &streamErr),
		errors.Is(err, ErrStreamTruncated):
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorFault() != smithy.FaultUnknown {
		return api.ErrorFault() == smithy.FaultServer
	}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) {
		code := status.HTTPStatusCode()
		return code == 429 || code >= 500
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF)
}
