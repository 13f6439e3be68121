package converse

import "errors"

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
	// model_context_window_exceeded, or Bedrock's ValidationException saying
	// the input is too long (which it wraps). The conversation no longer fits
	// the model's context window, and Options.Context did not trim it (it is
	// not set, or there was nothing left to drop).
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
