package bedrocktest

import (
	"fmt"
	"net/http"

	"github.com/tooluse/bedrock/converse/internal/wire"
)

// Validation returns a 400 ValidationException, Bedrock's answer to a
// request that breaks its rules. The SDK returns it as
// *types.ValidationException.
func Validation(msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "ValidationException", Message: msg}
}

// Throttling returns a 429 ThrottlingException with Bedrock's message. The
// SDK's default retryer retries it.
func Throttling() *Error {
	return &Error{
		Status:  http.StatusTooManyRequests,
		Type:    "ThrottlingException",
		Message: "Too many requests, please wait before trying again.",
	}
}

// AccessDenied returns a 403 AccessDeniedException.
func AccessDenied(msg string) *Error {
	return &Error{Status: http.StatusForbidden, Type: "AccessDeniedException", Message: msg}
}

// ResourceNotFound returns a 404 ResourceNotFoundException, as for an
// unknown model ID.
func ResourceNotFound(msg string) *Error {
	return &Error{Status: http.StatusNotFound, Type: "ResourceNotFoundException", Message: msg}
}

// ModelTimeout returns a 408 ModelTimeoutException. The SDK does not
// retry it.
func ModelTimeout() *Error {
	return &Error{
		Status:  http.StatusRequestTimeout,
		Type:    "ModelTimeoutException",
		Message: "Model has timed out in processing the request. Try your request again.",
	}
}

// ModelNotReady returns a 429 ModelNotReadyException. The SDK's standard
// retryer does not retry it: it retries a 429 only when the error type is
// unknown to the client or a throttling type, and this one is modelled.
func ModelNotReady() *Error {
	return &Error{
		Status:  http.StatusTooManyRequests,
		Type:    "ModelNotReadyException",
		Message: "Model is not ready for inference. Wait and try your request again.",
	}
}

// InternalServer returns a 500 InternalServerException. The SDK retries it.
func InternalServer() *Error {
	return &Error{
		Status:  http.StatusInternalServerError,
		Type:    "InternalServerException",
		Message: "The server encountered an internal error while processing the request.",
	}
}

// ServiceUnavailable returns a 503 ServiceUnavailableException. The SDK
// retries it.
func ServiceUnavailable() *Error {
	return &Error{
		Status:  http.StatusServiceUnavailable,
		Type:    "ServiceUnavailableException",
		Message: "Bedrock is unable to process your request.",
	}
}

// setupErrorf is the answer when the test setup is wrong: an exhausted
// Script, a Handler's own error, a nil Reply. It is a 400
// ValidationException, which the SDK does not retry. So the call fails at
// once, with one message starting "bedrocktest: " that says what went
// wrong.
func setupErrorf(format string, args ...any) *Error {
	return Validation("bedrocktest: " + fmt.Sprintf(format, args...))
}

// modelErrors starts Bedrock's message for a request the model, not
// Bedrock, rejected: modelErrors + "...".
const modelErrors = "The model returned the following errors: "

// writeError answers in Bedrock's error form: the status, the error type in
// X-Amzn-ErrorType (where the SDK's restJson1 decoder looks first) and a
// JSON body {"message": ...}.
func writeError(w http.ResponseWriter, e *Error) {
	status := e.Status
	if status == 0 {
		status = http.StatusBadRequest
	}
	w.Header().Set("Content-Type", wire.ContentTypeJSON)
	w.Header().Set(wire.ErrorTypeHeader, e.Type)
	w.WriteHeader(status)
	_, _ = w.Write(wire.ErrorBody(e.Message))
}
