package agentcore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/tooluse/bedrock/converse"
)

// invocation is the body of POST /invocations.
type invocation struct {
	Prompt    string     `json:"prompt"`
	Decisions []decision `json:"decisions"`
	Stream    bool       `json:"stream"`
}

// decision is a converse.Decision in the body; By defaults to "the
// caller". Answer is an accepted question's answer, a JSON object.
type decision struct {
	ID      string           `json:"toolUseId"`
	Verdict converse.Verdict `json:"verdict"`
	By      string           `json:"by"`
	Reason  string           `json:"reason"`
	Answer  json.RawMessage  `json:"answer"`
}

func (inv *invocation) decisions() []converse.Decision {
	ds := make([]converse.Decision, len(inv.Decisions))
	for i, d := range inv.Decisions {
		if d.By == "" && d.Verdict == converse.Denied {
			d.By = "the caller"
		}
		ds[i] = converse.Decision{ID: d.ID, Verdict: d.Verdict, By: d.By, Reason: d.Reason, Answer: d.Answer}
	}
	return ds
}

// bodyTypes are the Content-Types of a body read as JSON: JSON's own, and
// those that callers send JSON as without saying so. The AWS SDK for Go's
// InvokeAgentRuntime sends application/octet-stream when its input has no
// ContentType, and the runtime passes the header on; the runtime's Python
// SDK (BedrockAgentCoreApp) reads every body as JSON whatever its type.
var bodyTypes = map[string]bool{
	"application/json":         true,
	"application/octet-stream": true,
	"text/plain":               true,
}

// readInvocation reads and checks the body. Its errors say what is wrong
// with it, with the status to answer. The status is 415 for a Content-Type
// other than those of bodyTypes (or none), and 413 for a body over maxBody
// bytes. It is 400 for the rest, a body that could not be read included.
// ignored are the body's fields that the Handler does not know.
func readInvocation(w http.ResponseWriter, r *http.Request, maxBody int64) (inv *invocation, ignored []string, status int, err error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || !bodyTypes[mt] {
			return nil, nil, http.StatusUnsupportedMediaType, fmt.Errorf("agentcore: the body is %q: want application/json (or application/octet-stream or text/plain holding JSON)", ct)
		}
	}
	// Decoded as it is read: the body is held once, in the decoder.
	inv, ignored, err = decodeInvocation(http.MaxBytesReader(w, r.Body, maxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, nil, http.StatusRequestEntityTooLarge, fmt.Errorf("agentcore: the body is larger than %d bytes, the most this server takes", maxBody)
	}
	if err != nil {
		return nil, nil, http.StatusBadRequest, err
	}
	return inv, ignored, http.StatusOK, nil
}

// decodeInvocation decodes and checks the body a field at a time, so that
// it can skip, and name, the fields it does not know (a caller's own
// metadata, say). Its errors say what is wrong in JSON's words, not Go's.
func decodeInvocation(body io.Reader) (*invocation, []string, error) {
	dec := json.NewDecoder(body)
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, notJSON(err)
	}
	if tok != json.Delim('{') {
		return nil, nil, fmt.Errorf(`agentcore: the body is %s: want an object, {"prompt": "..."} or {"decisions": [...]}`, jsonKind(tok))
	}
	var inv invocation
	var ignored []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, notJSON(err)
		}
		name, _ := tok.(string) // an object's keys are strings
		var field any
		switch name {
		case "prompt":
			field = &inv.Prompt
		case "decisions":
			field = &inv.Decisions
		case "stream":
			field = &inv.Stream
		default:
			ignored, field = append(ignored, name), new(json.RawMessage)
		}
		if err := dec.Decode(field); err != nil {
			return nil, nil, fieldError(name, err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, nil, notJSON(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, nil, err
		}
		return nil, nil, errors.New("agentcore: the body has data after its JSON object")
	}
	switch {
	case strings.TrimSpace(inv.Prompt) == "" && len(inv.Decisions) == 0:
		return nil, nil, errors.New(`agentcore: the body has no "prompt" and no "decisions"`)
	case inv.Prompt != "" && len(inv.Decisions) > 0:
		return nil, nil, errors.New(`agentcore: the body has both a "prompt" and "decisions": send the decisions first, then the prompt`)
	}
	return &inv, ignored, nil
}

// notJSON is the error of a body that is not JSON.
func notJSON(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New(`agentcore: the body is not {"prompt": "..."} or {"decisions": [...]}: it ends before its JSON does`)
	}
	return fmt.Errorf(`agentcore: the body is not {"prompt": "..."} or {"decisions": [...]}: %w`, err)
}

// fieldError is the error of the body's field name that failed to decode,
// in JSON's words: "prompt" is a number: want a string.
func fieldError(name string, err error) error {
	var typ *json.UnmarshalTypeError
	if !errors.As(err, &typ) {
		return fmt.Errorf("agentcore: the body's %q: %w", name, notJSON(err))
	}
	where := strconv.Quote(name)
	if typ.Field != "" && typ.Field != name { // a field of its elements
		where += ": " + strconv.Quote(typ.Field)
	}
	return fmt.Errorf("agentcore: the body's %s is %s: want %s", where, article(typ.Value), wantKind(typ.Type))
}

// article puts "a" or "an" before the kind of a JSON value, as
// json.UnmarshalTypeError names it ("string", "number 1.5", "object").
func article(value string) string {
	if value != "" && strings.ContainsRune("aeiou", rune(value[0])) {
		return "an " + value
	}
	return "a " + value
}

// wantKind names the JSON value that decodes into t.
func wantKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "a number"
	}
	return "another value"
}

// jsonKind names the JSON value that starts with tok.
func jsonKind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "true or false"
	}
	return "null"
}

// acceptsStream reports whether the caller asked for server-sent events in
// its Accept header.
func acceptsStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/event-stream" {
				return true
			}
		}
	}
	return false
}
