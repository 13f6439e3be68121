package bedrocktest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// RecordingVersion is the version of the recording format that
// LoadRecording reads and Save writes.
const RecordingVersion = 1

// LoadRecording reads the recording file at path and checks it. Errors name
// the file and, where it applies, the exchange (counting from 1), as in
// "bedrocktest: recording testdata/chat.json: exchange 2: stream has no events".
//
// # Format
//
// A recording is one JSON object, written indented with a newline at the end:
//
//	{
//	  "version": 1,
//	  "exchanges": [
//	    {
//	      "operation": "Converse",
//	      "modelId": "anthropic.claude-3-5-haiku-20241022-v1:0",
//	      "request": {"messages": [...], "toolConfig": {...}},
//	      "status": 200,
//	      "response": {"output": {"message": {...}}, "stopReason": "tool_use", ...}
//	    },
//	    {
//	      "operation": "ConverseStream",
//	      "modelId": "anthropic.claude-3-5-haiku-20241022-v1:0",
//	      "request": {"messages": [...]},
//	      "status": 200,
//	      "events": [
//	        {"type": "messageStart", "payload": {"role": "assistant"}},
//	        {"type": "contentBlockDelta", "payload": {"contentBlockIndex": 0, "delta": {"text": "Hi"}}},
//	        ...
//	      ]
//	    },
//	    {
//	      "operation": "Converse",
//	      "modelId": "anthropic.claude-3-5-haiku-20241022-v1:0",
//	      "request": {"messages": [...]},
//	      "status": 429,
//	      "errorType": "ThrottlingException",
//	      "response": {"message": "Too many requests, please wait before trying again."}
//	    }
//	  ]
//	}
//
// "version" is RecordingVersion; files of any other version are rejected.
// "exchanges" lists the model calls in the order they were made, one entry
// per HTTP attempt (an SDK retry is an exchange of its own). Each exchange has:
//
//   - "operation": "Converse" or "ConverseStream".
//   - "modelId": the model ID or ARN from the request path, path-unescaped.
//   - "request": the request body, a JSON object, as the client sent it
//     (or a JSON string holding its text if it was not JSON).
//   - "status": the HTTP status of the response.
//   - "errorType": for an error response (status 300 or more), the error
//     type from the X-Amzn-ErrorType header without what follows ':' (for
//     example "ValidationException"); absent otherwise.
//   - "response": the response body of a successful Converse call (a JSON
//     object, or a JSON string holding its text if it was not JSON, served
//     again as that text), or the body of an error response of either
//     operation (usually {"message": "..."}); absent for a successful
//     ConverseStream call.
//   - "events": for a successful ConverseStream call, the event-stream
//     messages in the order they arrived, each as {"type", "payload"}: "type"
//     is the :event-type header and "payload" the JSON payload. An exception
//     message (":message-type" "exception") is recorded the same way, with
//     the :exception-type header as its type (for example
//     "modelStreamErrorException") and the exception's body as its payload;
//     an error message (":message-type" "error") has the :error-code header as
//     its type and {"message": :error-message} as its payload. Such a message
//     ends the stream, so it can only be the last event. A type ending in
//     "Exception" marks an exception. A payload of null means the message
//     had none. A stream that the client closed before its end holds only
//     the events read until then.
//
// Bodies and payloads are embedded as JSON values, so the file is readable
// and diffs well. Whitespace between JSON tokens is not kept (the whole file
// is indented); every other byte is: key order, number spelling, string
// escapes. A body that is not JSON (a proxy's HTML error page, say) is kept
// as a JSON string holding its text.
//
// No header of the request or the response is recorded, apart from the error
// type, and the Recorder passes every body and payload through Redact (an
// AWS error body may echo the signed request), so a recording holds no
// credentials, session tokens, signatures or request IDs, and can be
// committed. Save writes it with mode 0600 all the same.
//
// LoadRecording rejects unknown fields, unknown operations, a missing model
// ID, request body or status, a successful Converse exchange without a
// response object, a successful stream without events, events on an error
// response, and an exception that is not the last event.
func LoadRecording(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bedrocktest: recording: %w", err)
	}
	defer f.Close()
	return readRecording(f, "recording "+path)
}

// ReadRecording reads a recording from r and checks it as LoadRecording
// does.
func ReadRecording(r io.Reader) (*Recording, error) {
	return readRecording(r, "recording")
}

func readRecording(r io.Reader, what string) (*Recording, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var rec Recording
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Errorf("bedrocktest: %s: %w", what, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("bedrocktest: %s: data after the recording's JSON object", what)
	}
	if err := checkRecording(&rec); err != nil {
		return nil, fmt.Errorf("bedrocktest: %s: %w", what, err)
	}
	compactRecording(&rec)
	return &rec, nil
}

// Save writes the recording to path, as WriteTo does, with mode 0600: a
// recording holds the conversation, which may be private. The file is
// written only if the whole recording is valid, to a temporary file in the
// same directory that then replaces path, so that an existing file gets the
// new mode too and a failed Save leaves the old file whole.
func (rec *Recording) Save(path string) error {
	var buf bytes.Buffer
	if _, err := rec.WriteTo(&buf); err != nil {
		return err
	}
	if err := writeFile(path, buf.Bytes()); err != nil {
		return fmt.Errorf("bedrocktest: save recording: %w", err)
	}
	return nil
}

// writeFile writes data to path through a temporary file (which
// os.CreateTemp makes with mode 0600) renamed over path.
func writeFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// WriteTo writes the recording in the format described at LoadRecording:
// indented JSON with a newline at the end, the same bytes for the same
// recording. A Version of 0 is written as RecordingVersion. A recording that
// LoadRecording would reject is not written at all.
func (rec *Recording) WriteTo(w io.Writer) (int64, error) {
	if rec == nil {
		return 0, errors.New("bedrocktest: save recording: nil recording")
	}
	out := *rec
	if out.Version == 0 {
		out.Version = RecordingVersion
	}
	if out.Exchanges == nil {
		out.Exchanges = []Exchange{} // "exchanges": [] rather than null
	}
	if err := checkRecording(&out); err != nil {
		return 0, fmt.Errorf("bedrocktest: save recording: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	// HTML escaping would turn "<" in recorded text into "\u003c": the same
	// JSON, but no longer the bytes that crossed the wire.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&out); err != nil {
		return 0, fmt.Errorf("bedrocktest: save recording: %w", err)
	}
	n, err := w.Write(buf.Bytes())
	return int64(n), err
}

func checkRecording(rec *Recording) error {
	if rec.Version != RecordingVersion {
		return fmt.Errorf("unsupported version %d (want %d)", rec.Version, RecordingVersion)
	}
	for i := range rec.Exchanges {
		if err := checkExchange(&rec.Exchanges[i]); err != nil {
			return fmt.Errorf("exchange %d: %w", i+1, err)
		}
	}
	return nil
}

// checkExchange reports the first way in which x breaks the format.
func checkExchange(x *Exchange) error {
	if x.Operation != OpConverse && x.Operation != OpConverseStream {
		return fmt.Errorf("unknown operation %q (want %q or %q)", x.Operation, OpConverse, OpConverseStream)
	}
	if x.ModelID == "" {
		return errors.New("no modelId")
	}
	if len(x.Request) == 0 {
		return errors.New("no request body")
	}
	if !isJSONObject(x.Request) && !isJSONString(x.Request) {
		return errors.New("request body is not a JSON object or string")
	}
	if x.Status == 0 {
		return errors.New("no status")
	}
	if x.Status < 200 || x.Status > 599 {
		return fmt.Errorf("status %d is not an HTTP response status", x.Status)
	}
	if len(x.Response) > 0 && !json.Valid(x.Response) {
		return errors.New("response body is not JSON")
	}
	if x.Status >= 300 {
		if len(x.Events) > 0 {
			return fmt.Errorf("error response (status %d) has events", x.Status)
		}
		return nil
	}
	if x.ErrorType != "" {
		return fmt.Errorf("errorType %q on a successful response (status %d)", x.ErrorType, x.Status)
	}
	if x.Operation == OpConverse {
		if len(x.Events) > 0 {
			return errors.New("a Converse exchange has events (only ConverseStream has)")
		}
		if len(x.Response) == 0 {
			return errors.New("a successful Converse exchange has no response body")
		}
		if !isJSONObject(x.Response) && !isJSONString(x.Response) {
			return errors.New("the Converse response body is not a JSON object or string")
		}
		return nil
	}
	if len(x.Response) > 0 {
		return errors.New("a successful ConverseStream exchange has a response body (its response is its events)")
	}
	if len(x.Events) == 0 {
		return errors.New("stream has no events and is not an error")
	}
	for j, ev := range x.Events {
		if ev.Type == "" {
			return fmt.Errorf("event %d: no type", j+1)
		}
		if len(ev.Payload) > 0 && !json.Valid(ev.Payload) {
			return fmt.Errorf("event %d (%s): payload is not JSON", j+1, ev.Type)
		}
		if isExceptionEvent(ev) && j != len(x.Events)-1 {
			return fmt.Errorf("event %d: exception %s is not the last event", j+1, ev.Type)
		}
	}
	return nil
}

// isExceptionEvent reports whether a recorded event stands for an exception
// message. Bedrock's event types are lowerCamelCase nouns (messageStart,
// contentBlockDelta, metadata) and its exception types all end in
// "Exception", which is what lets the format do without a separate field.
func isExceptionEvent(ev Event) bool {
	return strings.HasSuffix(ev.Type, "Exception")
}

func isJSONObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// isJSONString reports whether b is a JSON string: a body recorded as text.
func isJSONString(b []byte) bool {
	var s string
	return json.Unmarshal(b, &s) == nil
}

// compactRecording undoes the file's indentation inside the bodies, so that
// a loaded body is served as compactly as it was received.
func compactRecording(rec *Recording) {
	for i := range rec.Exchanges {
		x := &rec.Exchanges[i]
		x.Request = compactJSON(x.Request)
		x.Response = compactJSON(x.Response)
		for j := range x.Events {
			x.Events[j].Payload = compactJSON(x.Events[j].Payload)
		}
	}
}

func compactJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return b
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return b // checked before; keep it as it is
	}
	return buf.Bytes()
}

// wireJSON turns a body or payload as received into the JSON value to
// record: a copy of it if it is JSON, nil if it is empty, or else a JSON
// string holding its text.
func wireJSON(b []byte) json.RawMessage {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if json.Valid(b) {
		return bytes.Clone(b)
	}
	s, _ := json.Marshal(string(b)) // a string always marshals
	return s
}

// cloneExchange copies x so that neither copy shares memory with the other.
func cloneExchange(x Exchange) Exchange {
	x.Request = bytes.Clone(x.Request)
	x.Response = bytes.Clone(x.Response)
	if x.Events != nil {
		evs := make([]Event, len(x.Events))
		for i, ev := range x.Events {
			evs[i] = Event{Type: ev.Type, Payload: bytes.Clone(ev.Payload)}
		}
		x.Events = evs
	}
	return x
}
