package recording

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tooluse/bedrock/converse/internal/wire"
)

// Version is the version of the recording format that Save writes. Load
// reads it and every earlier version: version 1 is version 2 without
// Event.MessageType and Exchange.DecodeError.
const Version = 2

// Operation names, as they appear in Exchange.Operation.
const (
	OpConverse       = wire.OpConverse
	OpConverseStream = wire.OpConverseStream
)

// Recording is a sequence of model calls as they crossed the wire, in the
// format described in the package documentation.
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
	// DecodeError is set on a ConverseStream exchange whose response body
	// stopped being an event stream after Events (a checksum that does not
	// match, bytes that are no event-stream message): what the decoder
	// said. A replay then fails the stream there, as the client did.
	DecodeError string `json:"decodeError,omitempty"`
}

// Event is one ConverseStream message as on the wire: its type, its JSON
// payload, and its :message-type, if not an event's. The type is the
// :event-type header of an event, the :exception-type of an exception, or
// the :error-code of an error.
type Event struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
	// MessageType is "exception" or "error" for a message that ends the
	// stream with an error, and empty (or "event") for an event. Empty for
	// a Type ending in "Exception" means "exception", as in version 1.
	MessageType string `json:"messageType,omitempty"`
}

// Load reads the recording file at path and checks it against the format
// (see the package documentation). Errors name the file and, where it
// applies, the exchange (counting from 1), as in
// "recording: testdata/chat.json: exchange 2: stream has no events".
func Load(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	defer f.Close()
	return read(f, path)
}

// Read reads a recording from r and checks it as Load does.
func Read(r io.Reader) (*Recording, error) {
	return read(r, "")
}

// read reads a recording from r; errors name the file, if any.
func read(r io.Reader, path string) (*Recording, error) {
	prefix := "recording: "
	if path != "" {
		prefix += path + ": "
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var rec Recording
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Errorf("%s%w", prefix, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New(prefix + "data after the recording's JSON object")
	}
	if err := checkRecording(&rec); err != nil {
		return nil, fmt.Errorf("%s%w", prefix, err)
	}
	compactRecording(&rec)
	return &rec, nil
}

// Save writes the recording to path, as WriteTo does, with mode 0600: a
// recording holds the conversation, which may be private. The file is
// written only if the whole recording is valid. It goes to a temporary
// file in the same directory that then replaces path. So an existing file
// gets the new mode too, and a failed Save leaves the old file whole.
func (rec *Recording) Save(path string) error {
	var buf bytes.Buffer
	if _, err := rec.WriteTo(&buf); err != nil {
		return err
	}
	if err := writeFile(path, buf.Bytes()); err != nil {
		return fmt.Errorf("recording: save: %w", err)
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

// WriteTo writes the recording in the format of the package documentation:
// indented JSON with a newline at the end, the same bytes for the same
// recording. A Version of 0 is written as Version. A recording that
// Load would reject is not written at all.
func (rec *Recording) WriteTo(w io.Writer) (int64, error) {
	if rec == nil {
		return 0, errors.New("recording: save: nil recording")
	}
	out := *rec
	if out.Version == 0 {
		out.Version = Version
	}
	if out.Exchanges == nil {
		out.Exchanges = []Exchange{} // "exchanges": [] rather than null
	}
	if err := checkRecording(&out); err != nil {
		return 0, fmt.Errorf("recording: save: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	// HTML escaping would turn "<" in recorded text into "\u003c": the same
	// JSON, but no longer the bytes that crossed the wire.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&out); err != nil {
		return 0, fmt.Errorf("recording: save: %w", err)
	}
	n, err := w.Write(buf.Bytes())
	return int64(n), err
}

func checkRecording(rec *Recording) error {
	if rec.Version < 1 || rec.Version > Version {
		return fmt.Errorf("unsupported version %d (want 1 to %d)", rec.Version, Version)
	}
	for i := range rec.Exchanges {
		x := &rec.Exchanges[i]
		if err := checkExchange(x); err != nil {
			return fmt.Errorf("exchange %d: %w", i+1, err)
		}
		if rec.Version == 1 {
			if err := checkVersion1(x); err != nil {
				return fmt.Errorf("exchange %d: %w (version 2 has it, version 1 does not)", i+1, err)
			}
		}
	}
	return nil
}

// checkVersion1 reports a field of x that version 1 does not have, so
// that a file saying version 1 can be read by every reader of version 1.
func checkVersion1(x *Exchange) error {
	if x.DecodeError != "" {
		return errors.New("decodeError")
	}
	for j, ev := range x.Events {
		if ev.MessageType != "" {
			return fmt.Errorf("event %d: messageType", j+1)
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
		if x.DecodeError != "" {
			return fmt.Errorf("error response (status %d) has a decodeError (only a stream has)", x.Status)
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
		if x.DecodeError != "" {
			return errors.New("a Converse exchange has a decodeError (only ConverseStream has)")
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
	if len(x.Events) == 0 && x.DecodeError == "" {
		return errors.New("stream has no events and is not an error")
	}
	for j, ev := range x.Events {
		if ev.Type == "" {
			return fmt.Errorf("event %d: no type", j+1)
		}
		if len(ev.Payload) > 0 && !json.Valid(ev.Payload) {
			return fmt.Errorf("event %d (%s): payload is not JSON", j+1, ev.Type)
		}
		switch mt := messageType(ev); {
		case mt != wire.MessageTypeEvent && mt != wire.MessageTypeException && mt != wire.MessageTypeError:
			return fmt.Errorf("event %d (%s): unknown messageType %q (want %q, %q or none)", j+1, ev.Type, mt, wire.MessageTypeException, wire.MessageTypeError)
		case mt == wire.MessageTypeEvent:
		case j != len(x.Events)-1:
			return fmt.Errorf("event %d: %s %s is not the last event", j+1, mt, ev.Type)
		case x.DecodeError != "":
			return fmt.Errorf("event %d: a decodeError after the %s %s that ended the stream", j+1, mt, ev.Type)
		}
	}
	return nil
}

// messageType is the :message-type of a recorded event: "event",
// "exception" or "error" (see Event.MessageType).
func messageType(ev Event) string {
	return wire.RecordedMessageType(ev.MessageType, ev.Type)
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
			evs[i] = Event{Type: ev.Type, Payload: bytes.Clone(ev.Payload), MessageType: ev.MessageType}
		}
		x.Events = evs
	}
	return x
}
