package bedrocktest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// Operation names, as they appear in recordings and in Request.Operation.
const (
	OpConverse       = "Converse"
	OpConverseStream = "ConverseStream"
)

// Request is one Converse or ConverseStream call as the server received it.
type Request struct {
	Operation       string // OpConverse or OpConverseStream
	ModelID         string
	Messages        []types.Message
	System          []types.SystemContentBlock
	ToolConfig      *types.ToolConfiguration
	InferenceConfig *types.InferenceConfiguration
	Body            []byte // the request body exactly as received
}

// Handler answers model calls. It is called for Converse and ConverseStream
// alike; the server encodes the Reply in the wire form of the operation.
type Handler interface {
	ServeConverse(ctx context.Context, req *Request) (*Reply, error)
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(ctx context.Context, req *Request) (*Reply, error)

// ServeConverse calls f(ctx, req).
func (f HandlerFunc) ServeConverse(ctx context.Context, req *Request) (*Reply, error) {
	return f(ctx, req)
}

// Reply is the model's side of one call.
//
// Exactly one of Output, Raw or Events is normally set. Output is encoded by
// the server: as a Converse response body, or split into ConverseStream events.
// Raw and Events are served byte for byte (replay of a recording).
type Reply struct {
	Output *bedrockruntime.ConverseOutput
	Raw    json.RawMessage // a recorded Converse response body
	Events []Event         // recorded ConverseStream events

	// The fields below shape a ConverseStream response only.

	// Chunk is the most runes of text or tool input sent in one delta event
	// when Output is streamed (0 means 4, so most blocks arrive in pieces).
	Chunk int
	// Interval is a pause before each event after the first.
	Interval time.Duration
	// CutAfter, when positive, sends that many whole events, then half of the
	// next frame, and drops the connection.
	CutAfter int
	// DropMessageStop leaves out the messageStop event (and metadata).
	DropMessageStop bool
	// Exception, when set, is sent as an exception frame after ExceptionAfter
	// events, and the stream ends there.
	Exception      *Exception
	ExceptionAfter int
}

// Event is one ConverseStream event as on the wire: its :event-type header
// and its JSON payload.
type Event struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// Exception is an exception frame in a ConverseStream response, such as
// {Type: "modelStreamErrorException", Message: "..."}.
type Exception struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Error is an error response in Bedrock's form: the HTTP status, the
// X-Amzn-ErrorType header and a JSON body {"message": ...}. The SDK client
// turns it into the matching typed error, such as *types.ValidationException.
// A Handler returns it as its error; any other error is a mistake of the
// test and becomes a 400 ValidationException (not retried) whose message
// starts "bedrocktest: handler error: ".
type Error struct {
	Status  int
	Type    string // e.g. "ValidationException"
	Message string
}

// Error returns the status, type and message of the error.
func (e *Error) Error() string {
	return fmt.Sprintf("bedrocktest: %d %s: %s", e.Status, e.Type, e.Message)
}

// Recording is a sequence of model calls as they crossed the wire. It is the
// format of the JSON files in testdata/ and of the CLI's -record flag.
type Recording struct {
	Version   int        `json:"version"`
	Exchanges []Exchange `json:"exchanges"`
}

// Exchange is one recorded model call. Request and Response hold the bodies
// exactly as on the wire; a stream's response is its events in order. No
// headers are recorded, so a recording never holds credentials or signatures.
type Exchange struct {
	Operation string          `json:"operation"` // OpConverse or OpConverseStream
	ModelID   string          `json:"modelId"`
	Request   json.RawMessage `json:"request"`
	Status    int             `json:"status"`              // HTTP status of the response
	ErrorType string          `json:"errorType,omitempty"` // X-Amzn-ErrorType of an error response
	Response  json.RawMessage `json:"response,omitempty"`  // Converse body, or an error body
	Events    []Event         `json:"events,omitempty"`    // ConverseStream events
}
