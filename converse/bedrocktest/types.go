package bedrocktest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/tooluse/bedrock/converse/recording"
)

// Request is one Converse or ConverseStream call as the server received it.
type Request struct {
	Operation string // recording.OpConverse or recording.OpConverseStream
	// ConverseInput is the request as decoded, its ModelId from the URL's
	// path. GuardrailConfig is in its Converse form; a ConverseStream
	// request's streamProcessingMode is only in Body.
	bedrockruntime.ConverseInput
	Body []byte // the request body exactly as received
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
	Raw    json.RawMessage   // a recorded Converse response body
	Events []recording.Event // ConverseStream events, served as they are

	// The fields below shape a ConverseStream response only.

	// Chunk is the most runes of text or tool input sent in one delta event
	// when Output is streamed. 0 means 4, so most blocks arrive in pieces.
	// An image's bytes go 1,024 a rune.
	Chunk int
	// Interval is a pause before each event after the first.
	Interval time.Duration
	// Latency is a pause before the answer: for ConverseStream, after the
	// stream's 200 and before its first event; for Converse, before the
	// response. A model slow to start, or, longer than a client's deadline,
	// one that stalls before its first token. Unlike Delay, the stream's
	// response has begun: the client waits on the body, not on the 200.
	Latency time.Duration
	// CutAfter, when positive, sends that many whole events, then half of the
	// next frame, and drops the connection.
	CutAfter int
	// DropMessageStop leaves out the messageStop event (and metadata).
	DropMessageStop bool
	// StallAfter, when positive, sends that many events, then sends nothing
	// more and keeps the stream open until the client goes away: a model
	// that stops in the middle of its answer. Tests use it to see what
	// happens mid-stream without relying on timing.
	StallAfter int
	// Exception, when set, is sent as an exception frame after ExceptionAfter
	// events, and the stream ends there.
	Exception      *Exception
	ExceptionAfter int
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
