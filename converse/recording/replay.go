package recording

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/smithy-go/eventstream"

	"github.com/tooluse/bedrock/converse/internal/wire"
)

// ReplayOptions configures a Replayer.
type ReplayOptions struct {
	// Lenient serves the recorded answers whatever the requests hold,
	// checking only the operation of each call. Without it, each request
	// must match the recorded one (see Replayer).
	Lenient bool

	// IgnoreToolResults names tools whose output changes from run to run
	// (the current time, a random ID): the content of their results is left
	// out of the comparison of requests. A toolResult is left out when its
	// toolUseId is that of a toolUse of one of those tools in an earlier
	// assistant message of the same request; its toolUseId is still
	// compared.
	IgnoreToolResults []string
}

// Replayer is an HTTP client that answers the Converse and ConverseStream
// calls of a bedrockruntime client with the exchanges of a Recording, in
// process: the first call gets the first exchange, and so on. It implements
// aws.HTTPClient, so it goes in bedrockruntime.Options.HTTPClient, and no
// request leaves the process.
//
// A recorded Converse response is served byte for byte. A recorded stream
// is served message by message, each with its payload as recorded: an
// event as an event, an exception as an exception, an error as an error
// message. A recorded error is served with the same status, type and body.
// So the client fails as it did: with the same typed error and fields, or,
// for a body that was not JSON, the same deserialization error. A stream
// recorded with a DecodeError ends, after its events, in a message whose
// checksum does not match, which the client fails to decode.
//
// Each request must match the recorded one, unless ReplayOptions.Lenient
// is set. The model ID must match. The body is compared as JSON: key order
// and spacing do not matter, and numbers compare by value. Both bodies are
// first passed through Redact, as the Recorder keeps the request it
// records. So a prompt or tool result holding something Redact changes
// (such as "Authorization: ..." in a text) matches its recording.
//
// Any call that cannot be answered from the recording gets a 400
// ValidationException, with a message starting "recording: replay:". The
// SDK does not retry it. Such calls are a request that differs, a call
// past the last exchange, and a ConverseStream call where Converse was
// recorded or the other way round. A request that
// differs lists up to ten differences, one a line, as a JSON path with the
// recorded and the received value:
//
//	messages[2].content[0].text: want "What time is it?", got "What time?"
//
// Every call uses up an exchange, even one answered with such an error.
// Unused reports the exchanges never asked for. A Replayer is safe for
// concurrent use, though concurrent calls take exchanges in the order they
// arrive.
type Replayer struct {
	lenient   bool
	ignore    map[string]bool // ReplayOptions.IgnoreToolResults
	exchanges []Exchange      // read-only after NewReplayer

	mu   sync.Mutex
	next int // index of the exchange for the next call
}

// NewReplayer returns a Replayer of a copy of rec, configured by optFns.
func NewReplayer(rec *Recording, optFns ...func(*ReplayOptions)) *Replayer {
	var o ReplayOptions
	for _, fn := range optFns {
		fn(&o)
	}
	p := &Replayer{lenient: o.Lenient}
	if len(o.IgnoreToolResults) > 0 {
		p.ignore = make(map[string]bool, len(o.IgnoreToolResults))
		for _, name := range o.IgnoreToolResults {
			p.ignore[name] = true
		}
	}
	if rec != nil {
		for _, x := range rec.Exchanges {
			p.exchanges = append(p.exchanges, cloneExchange(x))
		}
	}
	return p
}

// Client returns a bedrockruntime client whose calls p answers, in process,
// that needs no AWS configuration at all. Its requests are unsigned, so it
// looks for no credentials: no environment, no shared files, no EC2 metadata
// service. It sends none either. That includes a Bedrock API key in
// AWS_BEARER_TOKEN_BEDROCK, which the SDK's client would otherwise prefer.
// Its region is us-east-1. optFns change its Options after that, as
// bedrockruntime.New applies them (set HTTPClient to a Recorder of p, say).
func (p *Replayer) Client(optFns ...func(*bedrockruntime.Options)) *bedrockruntime.Client {
	unsigned := func(o *bedrockruntime.Options) {
		// Anonymous credentials alone make the client pick bearer auth,
		// with no token, and panic: noAuth must come first.
		o.Credentials = aws.AnonymousCredentials{}
		o.AuthSchemePreference = []string{"noAuth"}
		o.BearerAuthTokenProvider = nil
	}
	return bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", HTTPClient: p}, append([]func(*bedrockruntime.Options){unsigned}, optFns...)...)
}

// Next uses up the next exchange for a call of operation (OpConverse or
// OpConverseStream) to modelID with the request body, and returns a copy of
// it. The error, if the call cannot be answered from the recording, starts
// "recording: replay:" and says why (see Replayer). Do calls it; so does
// bedrocktest.Replay, to serve a recording from a loopback server.
func (p *Replayer) Next(operation, modelID string, body []byte) (Exchange, error) {
	p.mu.Lock()
	i := p.next
	p.next++
	p.mu.Unlock()

	n := i + 1 // requests and exchanges count from 1 in messages
	if i >= len(p.exchanges) {
		return Exchange{}, replayErrorf("request %d but the recording has %d exchanges", n, len(p.exchanges))
	}
	x := &p.exchanges[i]
	if err := checkExchange(x); err != nil {
		return Exchange{}, replayErrorf("exchange %d of the recording: %v", n, err)
	}
	if operation != x.Operation {
		return Exchange{}, replayErrorf("request %d is %s but exchange %d of the recording is %s", n, operation, n, x.Operation)
	}
	if !p.lenient {
		// Redact is idempotent: a recorded body, redacted when recorded,
		// stays as it is, and a live one becomes what was recorded of it.
		if d := requestDiff(x.ModelID, recordedJSON(x.Request), modelID, recordedJSON(body), p.ignore); len(d) > 0 {
			return Exchange{}, replayErrorf("request %d differs from the recording:\n  %s", n, strings.Join(d, "\n  "))
		}
	}
	return cloneExchange(*x), nil
}

// Unused returns nil if every recorded exchange was asked for. Otherwise
// it returns an error naming how many were not and the first of them. A
// program that makes fewer calls than the recording has is as wrong as one
// that makes more.
func (p *Replayer) Unused() error {
	p.mu.Lock()
	used := p.next
	p.mu.Unlock()
	if left := len(p.exchanges) - used; left > 0 {
		x := p.exchanges[used]
		return replayErrorf("%d of %d recorded exchanges unused, from exchange %d (%s %s)", left, len(p.exchanges), used+1, x.Operation, x.ModelID)
	}
	return nil
}

func replayErrorf(format string, args ...any) error {
	return fmt.Errorf("recording: replay: "+format, args...)
}

// Do answers req from the recording, as Bedrock would have: it reads and
// closes the request body, and returns an error only if that fails or the
// request's context is done.
func (p *Replayer) Do(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	op, modelID, ok := wire.Route(req)
	if !ok {
		msg := fmt.Sprintf("recording: replay: no operation at %s %s", req.Method, req.URL.Path)
		return errorResponse(req, http.StatusNotFound, "UnknownOperationException", msg), nil
	}
	x, err := p.Next(op, modelID, body)
	switch {
	case err != nil:
		return errorResponse(req, http.StatusBadRequest, "ValidationException", err.Error()), nil
	case x.Status >= 300:
		return recordedErrorResponse(req, &x), nil
	case x.Operation == OpConverse:
		return response(req, x.Status, wire.ContentTypeJSON, wire.ServedBody(x.Response)), nil
	}
	var stream bytes.Buffer
	for _, ev := range x.Events {
		if err := writeRecordedFrame(&stream, ev); err != nil {
			return errorResponse(req, http.StatusBadRequest, "ValidationException", "recording: replay: "+err.Error()), nil
		}
	}
	if x.DecodeError != "" {
		if err := writeUndecodableFrame(&stream); err != nil {
			return errorResponse(req, http.StatusBadRequest, "ValidationException", "recording: replay: "+err.Error()), nil
		}
	}
	return response(req, x.Status, wire.ContentTypeEventStream, stream.Bytes()), nil
}

func errorResponse(req *http.Request, status int, errorType, message string) *http.Response {
	resp := response(req, status, wire.ContentTypeJSON, wire.ErrorBody(message))
	resp.Header.Set(wire.ErrorTypeHeader, errorType)
	return resp
}

// recordedErrorResponse serves a recorded error response. It serves its
// status, and its type (if it had one) in the header the SDK reads first.
// It serves its body as recorded, every field of it, or the text of a body
// that was not JSON.
func recordedErrorResponse(req *http.Request, x *Exchange) *http.Response {
	contentType := wire.ContentTypeJSON
	if isJSONString(x.Response) {
		contentType = "text/plain; charset=utf-8"
	}
	resp := response(req, x.Status, contentType, wire.ServedBody(x.Response))
	if x.ErrorType != "" {
		resp.Header.Set(wire.ErrorTypeHeader, x.ErrorType)
	}
	return resp
}

// writeRecordedFrame writes a recorded event as the message it was
// recorded from. That is an event, or an exception with its payload: every
// member of the exception, not only its message. Or it is an error message
// with its code and message in the headers the SDK reads them from.
func writeRecordedFrame(w io.Writer, ev Event) error {
	var msg eventstream.Message
	switch messageType(ev) {
	case wire.MessageTypeError:
		msg.Headers.Set(eventstream.MessageTypeHeader, eventstream.StringValue(eventstream.ErrorMessageType))
		msg.Headers.Set(eventstream.ErrorCodeHeader, eventstream.StringValue(ev.Type))
		if message, ok := errorEventMessage(ev.Payload); ok {
			msg.Headers.Set(eventstream.ErrorMessageHeader, eventstream.StringValue(message))
		}
		return eventstream.NewEncoder().Encode(w, msg)
	case wire.MessageTypeException:
		msg.Headers.Set(eventstream.ExceptionTypeHeader, eventstream.StringValue(ev.Type))
		msg.Headers.Set(eventstream.ContentTypeHeader, eventstream.StringValue(wire.ContentTypeJSON))
		msg.Headers.Set(eventstream.MessageTypeHeader, eventstream.StringValue(eventstream.ExceptionMessageType))
		msg.Payload = wire.ServedPayload(ev.Payload)
		return eventstream.NewEncoder().Encode(w, msg)
	}
	return wire.WriteEventFrame(w, ev.Type, wire.ServedPayload(ev.Payload))
}

// errorEventMessage is the message of a recorded error message: the
// "message" of its payload; ok is false if it had none (a payload of null).
func errorEventMessage(payload json.RawMessage) (message string, ok bool) {
	var p struct {
		Message *string `json:"message"`
	}
	if json.Unmarshal(payload, &p) != nil || p.Message == nil {
		return "", false
	}
	return *p.Message, true
}

// writeUndecodableFrame writes a message whose checksum does not match,
// which the client's decoder rejects: the end of a stream recorded with a
// DecodeError.
func writeUndecodableFrame(w io.Writer) error {
	var frame bytes.Buffer
	if err := wire.WriteEventFrame(&frame, "undecodable", nil); err != nil {
		return err
	}
	b := frame.Bytes()
	b[len(b)-1] ^= 0xff // the message CRC, last
	_, err := w.Write(b)
	return err
}

func response(req *http.Request, status int, contentType string, body []byte) *http.Response {
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {contentType}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
