package lambdatool

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/internal/modelerr"
)

// minResponseLimit is the response a tool accepts unless its output limit
// (tools.Options.MaxOutput) is larger, as for a command tool's output. Lambda
// itself allows a synchronous response of up to 6 MB.
const minResponseLimit = 1 << 20

// quoteLimit bounds the bytes of a response quoted in an error.
const quoteLimit = 200

// FunctionError reports that the function failed: Lambda answered with the
// X-Amz-Function-Error header set, and the error object the runtime made
// as the payload. Its text, which the model reads, holds the error's type and
// message but never its stack trace.
type FunctionError struct {
	// Kind is the header's value: "Unhandled" for an error of the function
	// or its runtime (a panic, a timeout, running out of memory), "Handled"
	// for one the function reported itself.
	Kind string
	// Type is the payload's errorType, if any, such as "errorString".
	Type string
	// Message is the payload's errorMessage, if any.
	Message string
}

// Error returns "the function failed: " followed by the type and the
// message.
func (e *FunctionError) Error() string {
	var b strings.Builder
	b.WriteString("the function failed")
	switch {
	case e.Type != "" && e.Message != "":
		b.WriteString(": " + e.Type + ": " + e.Message)
	case e.Type != "" || e.Message != "":
		b.WriteString(": " + e.Type + e.Message)
	default:
		b.WriteString(" (" + e.Kind + ") without saying why")
	}
	return b.String()
}

// newFunctionError reads the error object of a failed invocation. A payload
// that is not one is quoted as the message.
func newFunctionError(kind string, payload []byte) *FunctionError {
	var obj struct {
		Message *string `json:"errorMessage"`
		Type    *string `json:"errorType"`
	}
	e := &FunctionError{Kind: kind}
	if json.Unmarshal(payload, &obj) != nil || (obj.Message == nil && obj.Type == nil) {
		e.Message = quote(payload)
		return e
	}
	if obj.Message != nil {
		e.Message = strings.TrimSpace(*obj.Message)
	}
	if obj.Type != nil {
		e.Type = strings.TrimSpace(*obj.Type)
	}
	return e
}

// responseLimit is the size of response a tool whose output limit is
// maxOutput accepts.
func responseLimit(maxOutput int) int {
	return max(minResponseLimit, maxOutput)
}

// checkResponse returns the payload of a successful invocation if it is
// JSON of at most limit bytes.
func checkResponse(payload []byte, limit int) (json.RawMessage, error) {
	if len(payload) > limit {
		return nil, modelerr.Errorf(tools.ErrOutputTooLarge, "%v: the function's response is %d bytes, over the limit of %d", tools.ErrOutputTooLarge, len(payload), limit)
	}
	if len(strings.TrimSpace(string(payload))) == 0 {
		return nil, modelerr.Errorf(errNotJSON, "the function's response is empty, not JSON")
	}
	if !json.Valid(payload) {
		return nil, modelerr.Errorf(errNotJSON, "the function's response is not JSON: %s", quote(payload))
	}
	return payload, nil
}

// errNotJSON is wrapped by the error of a response that is not JSON.
var errNotJSON = errors.New("response not JSON")

// quote is the start of an untrusted response, trimmed, valid UTF-8 and at
// most about quoteLimit bytes.
func quote(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > quoteLimit {
		cut := quoteLimit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if s == "" {
		return "(empty)"
	}
	return s
}

// isAccessDenied reports whether Lambda refused the caller: an
// AccessDeniedException or any 403.
func isAccessDenied(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "AccessDeniedException" {
		return true
	}
	var resp *awshttp.ResponseError
	return errors.As(err, &resp) && resp.HTTPStatusCode() == http.StatusForbidden
}

// apiErrorText is what the model is told of an error of the Lambda API: its
// code and message, without the SDK's operation and request details.
func apiErrorText(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		if msg := api.ErrorMessage(); msg != "" && msg != api.ErrorCode() {
			return api.ErrorCode() + ": " + msg
		}
		return api.ErrorCode()
	}
	return "Lambda could not be reached"
}
