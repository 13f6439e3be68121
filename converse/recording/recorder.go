package recording

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/eventstream"

	"github.com/tooluse/bedrock/converse/internal/redact"
	"github.com/tooluse/bedrock/converse/internal/wire"
)

// Recorder is an HTTP client that records the Converse and ConverseStream
// calls passing through it, to be saved as a Recording and served again by
// a Replayer. It implements aws.HTTPClient, so it goes in
// bedrockruntime.Options.HTTPClient:
//
//	rec := recording.NewRecorder(nil)
//	client := bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
//		o.HTTPClient = rec
//	})
//	// ... talk to Bedrock ...
//	err := rec.Save("testdata/chat.json")
//
// The Recorder sits below the SDK's retry loop and signer, so each attempt
// is recorded as an exchange of its own, and it sees signed requests: it
// records bodies only, never a header. Requests to other operations pass
// through untouched and unrecorded. Every body and event payload is passed
// through Redact before it is kept, as an AWS error may echo the signed
// request, session token included.
//
// Exchanges are kept in the order the requests were made. A Converse exchange
// is complete when its response has been read, which the Recorder does before
// returning it. A ConverseStream response is handed back at once, and its
// events are recorded as the caller reads them. The exchange is complete when
// the caller reads the body to its end or closes it, whichever comes first. A
// stream closed early keeps the events read until then; one closed before its
// first event is left out, as a replay would have nothing to serve for it.
// A call that converse.Options.ModelCalls gave up on and made again (a
// stall, a hedge's loser) is such a stream. Its replay ends before
// messageStop, so replay it with the same ModelCalls: their retries make the
// call again, as they did live. A
// stream whose bytes stop being an event stream is kept with the events
// before and a DecodeError, even with none before, so that its replay fails
// as the call did.
//
// Whatever the Recorder records can be saved. So a conversation that fails
// midway still leaves a recording of the calls made until then. A body
// that is not JSON is kept as a JSON string (see the format).
//
// A Recorder is safe for concurrent use.
type Recorder struct {
	next aws.HTTPClient

	mu    sync.Mutex
	slots []*recorderSlot // one per recorded request, in request order
}

// recorderSlot holds an exchange from its request until it is complete.
// Its fields are guarded by the Recorder's mu.
type recorderSlot struct {
	x    Exchange
	done bool // complete: part of Recording()
	drop bool // the request failed before a response: not recorded
}

// NewRecorder returns a Recorder that sends requests with PlainBodies(next).
// A nil next means the SDK's default HTTP client
// (awshttp.NewBuildableClient), which is what a Bedrock client uses when
// Options.HTTPClient is not set.
func NewRecorder(next aws.HTTPClient) *Recorder {
	return &Recorder{next: PlainBodies(next)}
}

// Do sends req with the Recorder's client, recording it if it is a Converse
// or ConverseStream call. An error from the client is returned as it is, and
// the call is not recorded.
func (r *Recorder) Do(req *http.Request) (*http.Response, error) {
	op, modelID, ok := wire.Route(req)
	if !ok {
		return r.next.Do(req)
	}

	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		reqBody, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		// A clone, so that the caller's request is left as it was, apart
		// from its consumed body.
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
		req.GetBody = func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(reqBody)), nil
		}
	}

	x := Exchange{Operation: op, ModelID: modelID, Request: recordedJSON(reqBody)}
	slot := r.reserve()
	resp, err := r.next.Do(req)
	if err != nil {
		r.finish(slot, nil)
		return resp, err
	}
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	x.Status = resp.StatusCode

	if resp.StatusCode >= 300 || op == OpConverse {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			r.finish(slot, nil)
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		x.Response = recordedJSON(body)
		if resp.StatusCode >= 300 {
			x.ErrorType = errorType(resp.Header.Get("X-Amzn-ErrorType"), body)
		}
		r.finish(slot, &x)
		return resp, nil
	}

	resp.Body = &streamTap{body: resp.Body, rec: r, slot: slot, x: x, dec: eventstream.NewDecoder()}
	return resp, nil
}

// Recording returns a copy of the exchanges recorded so far, in request
// order. A stream that is still being read is not part of it yet.
func (r *Recorder) Recording() *Recording {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := &Recording{Version: Version, Exchanges: []Exchange{}}
	for _, s := range r.slots {
		if s.done && !s.drop {
			rec.Exchanges = append(rec.Exchanges, cloneExchange(s.x))
		}
	}
	return rec
}

// Save writes the exchanges recorded so far to path, as Recording.Save does.
func (r *Recorder) Save(path string) error {
	return r.Recording().Save(path)
}

// reserve keeps a place for an exchange, so that exchanges are in request
// order even when a stream completes after a later request.
func (r *Recorder) reserve() *recorderSlot {
	s := &recorderSlot{}
	r.mu.Lock()
	r.slots = append(r.slots, s)
	r.mu.Unlock()
	return s
}

// finish completes a slot with x, or drops it if x is nil. Only the first
// call counts.
func (r *Recorder) finish(s *recorderSlot, x *Exchange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.done {
		return
	}
	s.done = true
	if x == nil {
		s.drop = true
		return
	}
	s.x = *x
}

// errorType returns the error type of an error response the way the SDK
// finds it: the X-Amzn-ErrorType header, else the body's "__type" or
// "code", each stripped of a namespace ("ns#Type") and of what follows ':'.
func errorType(header string, body []byte) string {
	t := header
	if t == "" {
		var b struct {
			Type string `json:"__type"`
			Code string `json:"code"`
		}
		if json.Unmarshal(body, &b) == nil {
			t = b.Type
			if t == "" {
				t = b.Code
			}
		}
	}
	if i := strings.IndexByte(t, ':'); i >= 0 {
		t = t[:i]
	}
	if i := strings.LastIndexByte(t, '#'); i >= 0 {
		t = t[i+1:]
	}
	return strings.TrimSpace(t)
}

// maxFrameLen bounds an event-stream message the tap will buffer; Bedrock's
// limit is 16 MiB of payload plus headers.
const maxFrameLen = 24 << 20

// streamTap passes a ConverseStream response body through unchanged while
// decoding a copy of the bytes into events, one whole message at a time.
// Read and Close may be called from different goroutines (the SDK reads in
// one and closes from another), hence the mutex.
type streamTap struct {
	body io.ReadCloser
	rec  *Recorder
	slot *recorderSlot
	x    Exchange // all but the events
	dec  *eventstream.Decoder

	mu        sync.Mutex
	pending   []byte  // bytes of a message not yet complete
	events    []Event // decoded so far
	decodeErr string  // why the bytes stopped being an event stream, if they did
	ended     bool    // an exception or error message ended the stream: stop decoding
	done      bool
}

func (t *streamTap) Read(p []byte) (int, error) {
	n, err := t.body.Read(p)
	t.mu.Lock()
	defer t.mu.Unlock()
	if n > 0 {
		t.feed(p[:n])
	}
	if err == io.EOF {
		t.finish()
	}
	return n, err
}

func (t *streamTap) Close() error {
	t.mu.Lock()
	t.finish()
	t.mu.Unlock()
	return t.body.Close()
}

// feed decodes every message that the bytes so far complete. Bytes that
// are no event-stream message stop it, as they stop the client's decoder,
// and so does a message that ends the stream with an error, after which
// the client reads no more.
func (t *streamTap) feed(b []byte) {
	if t.done || t.decodeErr != "" || t.ended {
		return
	}
	t.pending = append(t.pending, b...)
	for len(t.pending) >= 4 {
		// The prelude starts with the message's total length.
		size := int(binary.BigEndian.Uint32(t.pending))
		if size < 16 || size > maxFrameLen {
			t.decodeErr = fmt.Sprintf("not an event-stream message: its prelude gives a length of %d bytes", size)
			return
		}
		if len(t.pending) < size {
			return
		}
		msg, err := t.dec.Decode(bytes.NewReader(t.pending[:size]), nil)
		if err != nil {
			t.decodeErr = redact.String(err.Error())
			return
		}
		ev := recordedEvent(msg)
		t.events = append(t.events, ev)
		t.pending = append(t.pending[:0], t.pending[size:]...)
		if messageType(ev) != wire.MessageTypeEvent {
			t.ended = true
			return
		}
	}
}

func (t *streamTap) finish() {
	if t.done {
		return
	}
	t.done = true
	if len(t.events) == 0 && t.decodeErr == "" {
		t.rec.finish(t.slot, nil)
	} else {
		x := t.x
		x.Events = t.events
		x.DecodeError = t.decodeErr
		t.rec.finish(t.slot, &x)
	}
	t.pending = nil
}

// recordedJSON is what the Recorder keeps of a body or payload: wireJSON of
// it once redacted.
func recordedJSON(b []byte) json.RawMessage {
	return wireJSON([]byte(redact.String(string(b))))
}

// recordedEvent turns an event-stream message into an Event as the
// recording format describes it. An error message's code and message are
// those the SDK reports: "UnknownError" for a header that is missing.
func recordedEvent(msg eventstream.Message) Event {
	header := func(name string) string {
		if v := msg.Headers.Get(name); v != nil {
			return v.String()
		}
		return ""
	}
	switch header(eventstream.MessageTypeHeader) {
	case eventstream.ExceptionMessageType:
		return Event{Type: header(eventstream.ExceptionTypeHeader), Payload: recordedJSON(msg.Payload), MessageType: wire.MessageTypeException}
	case eventstream.ErrorMessageType:
		code := header(eventstream.ErrorCodeHeader)
		if code == "" {
			code = "UnknownError"
		}
		var payload json.RawMessage // null: no :error-message header
		if v := msg.Headers.Get(eventstream.ErrorMessageHeader); v != nil {
			payload, _ = json.Marshal(map[string]string{"message": redact.String(v.String())}) // a map of strings always marshals
		}
		return Event{Type: code, Payload: payload, MessageType: wire.MessageTypeError}
	default:
		return Event{Type: header(eventstream.EventTypeHeader), Payload: recordedJSON(msg.Payload)}
	}
}
