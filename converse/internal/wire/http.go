package wire

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// Operation names, as recordings and the loopback server spell them.
const (
	OpConverse       = "Converse"
	OpConverseStream = "ConverseStream"
)

// Route reads the operation and model ID from a request for
// /model/{modelId}/converse or /model/{modelId}/converse-stream, where the
// model ID is path-escaped (an ARN's '/' arrives as %2F). ok is false for
// any other request.
func Route(r *http.Request) (op, modelID string, ok bool) {
	modelID, suffix, ok := modelRoute(r)
	switch {
	case !ok:
		return "", "", false
	case suffix == "converse":
		return OpConverse, modelID, true
	case suffix == "converse-stream":
		return OpConverseStream, modelID, true
	}
	return "", "", false
}

// RouteCountTokens reads the model ID from a request for
// /model/{modelId}/count-tokens, the CountTokens operation, which Route
// leaves out as recordings do.
func RouteCountTokens(r *http.Request) (modelID string, ok bool) {
	modelID, suffix, ok := modelRoute(r)
	return modelID, ok && suffix == "count-tokens"
}

// modelRoute splits a POST to /model/{modelId}/{suffix}.
func modelRoute(r *http.Request) (modelID, suffix string, ok bool) {
	if r.Method != http.MethodPost {
		return "", "", false
	}
	rest, found := strings.CutPrefix(r.URL.EscapedPath(), "/model/")
	if !found {
		return "", "", false
	}
	escaped, suffix, found := strings.Cut(rest, "/")
	if !found || escaped == "" {
		return "", "", false
	}
	id, err := url.PathUnescape(escaped)
	if err != nil {
		return "", "", false
	}
	return id, suffix, true
}

// ErrorTypeHeader is where Bedrock puts the type of an error response, and
// where the SDK's restJson1 decoder looks first.
const ErrorTypeHeader = "X-Amzn-Errortype"

// ErrorBody is the JSON body of an error response: {"message": message}.
func ErrorBody(message string) []byte {
	b, _ := json.Marshal(struct {
		Message string `json:"message"`
	}{message}) // a struct of a string always marshals
	return b
}

// ErrorMessage finds the message of an error body as the SDK does. That is
// its "message" (or "Message") field. It is the body itself if the body
// holds neither field, or is a JSON string (a body that was not JSON, kept
// as text).
func ErrorMessage(body []byte) string {
	var s string
	if json.Unmarshal(body, &s) == nil {
		return s
	}
	var m struct {
		Message1 *string `json:"message"`
		Message2 *string `json:"Message"`
	}
	if json.Unmarshal(body, &m) == nil {
		if m.Message1 != nil {
			return *m.Message1
		}
		if m.Message2 != nil {
			return *m.Message2
		}
	}
	return string(body)
}

// ServedBody is the body to serve for a response body as a recording keeps
// it: the JSON itself, or the text of a JSON string (a body that was not
// JSON, recorded as text).
func ServedBody(recorded []byte) []byte {
	var text string
	if json.Unmarshal(recorded, &text) == nil {
		return []byte(text)
	}
	return bytes.Clone(recorded)
}

// ServedPayload is the payload to serve for an event payload as a recording
// keeps it: nil for a message that had none (recorded as null).
func ServedPayload(recorded []byte) []byte {
	if string(recorded) == "null" {
		return nil
	}
	return bytes.Clone(recorded)
}

// IsExceptionType reports whether a ConverseStream message type is an
// exception's. Bedrock's event types are lowerCamelCase nouns
// (messageStart, contentBlockDelta, metadata) and its exception types all
// end in "Exception", which is what let version 1 recordings do without a
// separate field.
func IsExceptionType(t string) bool {
	return strings.HasSuffix(t, "Exception")
}

// The :message-type of the event-stream messages a recording keeps, as a
// recorded event's messageType names them.
const (
	MessageTypeEvent     = "event"
	MessageTypeException = "exception"
	MessageTypeError     = "error"
)

// RecordedMessageType is the :message-type of a recorded event of type typ
// whose "messageType" field is messageType. It is that field if set.
// Version 1 recordings have no such field. For them it is
// MessageTypeException for a type that IsExceptionType, and
// MessageTypeEvent for any other.
func RecordedMessageType(messageType, typ string) string {
	switch {
	case messageType != "":
		return messageType
	case IsExceptionType(typ):
		return MessageTypeException
	}
	return MessageTypeEvent
}
