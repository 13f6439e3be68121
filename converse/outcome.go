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

// Outcome is the kind of end an error of a Send, a Resume or a step
// reports, as a host answers it: an HTTP status, a workflow's failure, an
// exit status. Classify gives it; the package doc's table (see Outcomes)
// says how each host of this module maps it.
type Outcome string

// The outcomes of Classify. A nil error has none: the task ended with a
// final answer.
const (
	// OutcomeRetry is a failure worth trying again unchanged, later:
	// throttling, a server fault (a 5xx), a model not ready, timed out or
	// stalled (ErrStalled), a broken stream, a transport failure.
	OutcomeRetry Outcome = "retry"
	// OutcomeCaller is a request that fails the same way until the caller
	// changes it: Bedrock's validation, access denied or not found,
	// ErrDecision, ErrToolChoice, ErrMaxTokens, ErrContextWindowExceeded.
	OutcomeCaller Outcome = "caller"
	// OutcomeLimit is a limit that ended the task: ErrMaxTurns, ErrBudget.
	// It is a normal end, not a failure: the Result holds what was done,
	// and the conversation goes on from it.
	OutcomeLimit Outcome = "limit"
	// OutcomePaused is a *PausedError: calls await a decision, which
	// Resume takes.
	OutcomePaused Outcome = "paused"
	// OutcomeConflict is a conversation not in a state that takes the call.
	// Its session changed or is held elsewhere (ErrSessionChanged,
	// ErrSessionLocked). Or it is paused or interrupted (ErrPaused,
	// ErrInterrupted). Or there is nothing to resume or answer
	// (ErrNothingToResume, ErrStaleStep).
	OutcomeConflict Outcome = "conflict"
	// OutcomeStopped is a task ended by its caller: ErrStopped, or a
	// context cancelled or past its deadline.
	OutcomeStopped Outcome = "stopped"
	// OutcomeInternal is any other failure: a Store's, an Approver's, the
	// model's malformed output, a bug.
	OutcomeInternal Outcome = "internal"
)

// Classify says which Outcome err, of a Send, a Resume, a step or a model
// call, reports; it is "" for nil. It looks through wrapping (errors.Is
// and errors.As), so it takes the loop's errors as they come.
func Classify(err error) Outcome {
	var paused *PausedError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &paused):
		return OutcomePaused
	case errors.Is(err, ErrMaxTurns), errors.Is(err, ErrBudget):
		return OutcomeLimit
	case errors.Is(err, ErrStopped):
		return OutcomeStopped
	case errors.Is(err, ErrSessionChanged), errors.Is(err, ErrSessionLocked), errors.Is(err, ErrPaused),
		errors.Is(err, ErrInterrupted), errors.Is(err, ErrNothingToResume), errors.Is(err, ErrStaleStep):
		return OutcomeConflict
	case errors.Is(err, ErrStalled):
		return OutcomeRetry
	case errors.Is(err, ErrDecision), errors.Is(err, ErrToolChoice), errors.Is(err, ErrMaxTokens),
		errors.Is(err, ErrContextWindowExceeded):
		return OutcomeCaller
	}
	return classifyFailure(err)
}

// classifyFailure classifies a failure of a call. OutcomeRetry is for Bedrock
// throttling, a server fault (InternalServerException,
// ServiceUnavailableException, a 5xx), a model not ready or timed out, a
// broken stream or a transport failure. OutcomeStopped is for the caller's
// cancel or deadline. OutcomeCaller is for the client's fault.
func classifyFailure(err error) Outcome {
	var canceled *smithy.CanceledError // the caller's context ended
	if errors.As(err, &canceled) {
		return OutcomeStopped
	}
	// A request that never got an answer (refused, reset, or past the HTTP
	// client's own Timeout, which errors.Is takes for a deadline) is worth
	// another try. The SDK wraps it in a response error of status 0.
	var send *smithyhttp.RequestSendError
	if errors.As(err, &send) {
		return OutcomeRetry
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return OutcomeStopped
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
		return OutcomeRetry
	}
	if o, ok := blame(err); ok {
		return o
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) {
		return OutcomeRetry
	}
	return OutcomeInternal
}

// blame says whose fault err is by its AWS API error's fault, or else by
// its HTTP status: OutcomeRetry for a server's (or a 429), OutcomeCaller
// for the client's. ok is false when err holds neither.
func blame(err error) (o Outcome, ok bool) {
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorFault() != smithy.FaultUnknown {
		if api.ErrorFault() == smithy.FaultServer {
			return OutcomeRetry, true
		}
		return OutcomeCaller, true
	}
	var status interface{ HTTPStatusCode() int }
	if !errors.As(err, &status) {
		return "", false
	}
	switch code := status.HTTPStatusCode(); {
	case code == 429 || code >= 500:
		return OutcomeRetry, true
	case code >= 400:
		return OutcomeCaller, true
	}
	return OutcomeInternal, true
}
