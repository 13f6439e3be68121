package bedrocktest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// ReplayOption configures Replay.
type ReplayOption func(*replayConfig)

type replayConfig struct {
	lenient     bool
	ignoreTools map[string]bool
}

// Lenient makes Replay serve the recorded answers whatever the requests
// hold, checking only the operation of each call. Without it, each request
// must match the recorded one (see Replay).
func Lenient() ReplayOption {
	return func(c *replayConfig) { c.lenient = true }
}

// IgnoreToolResults leaves out of the comparison of requests the content of
// the results of the named tools, for tools whose output changes from run to
// run (the current time, a random ID). A toolResult is left out when its
// toolUseId is that of a toolUse of one of those tools in an earlier
// assistant message of the same request; its toolUseId is still compared.
func IgnoreToolResults(names ...string) ReplayOption {
	return func(c *replayConfig) {
		if c.ignoreTools == nil {
			c.ignoreTools = make(map[string]bool)
		}
		for _, n := range names {
			c.ignoreTools[n] = true
		}
	}
}

// Replay returns a Handler that answers the calls of a test with the
// exchanges of rec: the first call gets the first exchange, and so on.
// A recorded Converse response is served byte for byte, a recorded stream
// event by event (its exception, if it ended with one, as an exception
// message), and a recorded error as the same *Error: same status, same type,
// same message.
//
// Each request must match the recorded one, unless Lenient is given: the
// model ID, and the body compared as JSON (key order and spacing do not
// matter, numbers compare by value). A request that differs is answered with
// a 400 ValidationException whose message starts "bedrocktest: replay:
// request N differs from the recording:" and lists up to ten differences,
// one a line, as a JSON path with the recorded and the received value:
//
//	messages[2].content[0].text: want "What time is it?", got "What time?"
//
// Any call that cannot be answered from the recording gets such a 400
// ValidationException, which the SDK client does not retry, with a message
// starting "bedrocktest: replay:": a request that differs, a call past the
// last exchange, and a ConverseStream call where Converse was recorded or
// the other way round. Every call uses up an exchange, even one answered
// with such an error. ReplayT also fails the test if exchanges are left
// unused.
//
// Replay works on a copy of rec, and the Handler is safe for concurrent use,
// though concurrent calls take exchanges in the order they arrive.
func Replay(rec *Recording, opts ...ReplayOption) Handler {
	return newReplayer(rec, opts)
}

// ReplayT is Replay for a test: when the test ends, it fails t if some
// recorded exchanges were never asked for, naming how many and the first of
// them, as a test that makes fewer calls than the recording has is as wrong
// as one that makes more.
func ReplayT(t testing.TB, rec *Recording, opts ...ReplayOption) Handler {
	t.Helper()
	p := newReplayer(rec, opts)
	t.Cleanup(func() {
		p.mu.Lock()
		used := p.next
		p.mu.Unlock()
		if left := len(p.exchanges) - used; left > 0 {
			x := p.exchanges[used]
			t.Errorf("bedrocktest: replay: %d of %d recorded exchanges unused, from exchange %d (%s %s)", left, len(p.exchanges), used+1, x.Operation, x.ModelID)
		}
	})
	return p
}

func newReplayer(rec *Recording, opts []ReplayOption) *replayer {
	p := &replayer{}
	for _, o := range opts {
		o(&p.cfg)
	}
	if rec != nil {
		for _, x := range rec.Exchanges {
			p.exchanges = append(p.exchanges, cloneExchange(x))
		}
	}
	return p
}

type replayer struct {
	cfg       replayConfig
	exchanges []Exchange // read-only after Replay

	mu   sync.Mutex
	next int // index of the exchange for the next call
}

func (p *replayer) ServeConverse(_ context.Context, req *Request) (*Reply, error) {
	p.mu.Lock()
	i := p.next
	p.next++
	p.mu.Unlock()

	n := i + 1 // requests and exchanges count from 1 in messages
	if i >= len(p.exchanges) {
		return nil, replayError("request %d but the recording has %d exchanges", n, len(p.exchanges))
	}
	x := &p.exchanges[i]
	if err := checkExchange(x); err != nil {
		return nil, replayError("exchange %d of the recording: %v", n, err)
	}
	if req.Operation != x.Operation {
		return nil, replayError("request %d is %s but exchange %d of the recording is %s", n, req.Operation, n, x.Operation)
	}
	if !p.cfg.lenient {
		if d := requestDiff(x.ModelID, x.Request, req.ModelID, req.Body, p.cfg.ignoreTools); len(d) > 0 {
			return nil, replayError("request %d differs from the recording:\n  %s", n, strings.Join(d, "\n  "))
		}
	}

	if x.Status >= 300 {
		return nil, &Error{Status: x.Status, Type: x.ErrorType, Message: recordedMessage(x.Response)}
	}
	if x.Operation == OpConverse {
		var text string
		if json.Unmarshal(x.Response, &text) == nil { // recorded as text: not JSON
			return &Reply{Raw: []byte(text)}, nil
		}
		return &Reply{Raw: bytes.Clone(x.Response)}, nil
	}
	reply := &Reply{Events: []Event{}} // non-nil: a stream that is only an exception
	for _, ev := range x.Events {
		if isExceptionEvent(ev) { // checked to be the last one
			reply.Exception = &Exception{Type: ev.Type, Message: recordedMessage(ev.Payload)}
			reply.ExceptionAfter = len(reply.Events)
			break
		}
		payload := ev.Payload
		if string(payload) == "null" { // the message had no payload
			payload = nil
		}
		reply.Events = append(reply.Events, Event{Type: ev.Type, Payload: bytes.Clone(payload)})
	}
	return reply, nil
}

func replayError(format string, args ...any) *Error {
	return Validation("bedrocktest: replay: " + fmt.Sprintf(format, args...))
}

// recordedMessage finds the message of a recorded error body: its "message"
// (or "Message") field, or the body itself if it was recorded as text.
func recordedMessage(body json.RawMessage) string {
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

// maxDiffLines bounds a diff, so that a request that has nothing to do with
// the recording still gives a readable error.
const maxDiffLines = 10

// requestDiff compares a recorded request (model ID and body) with a
// received one and describes the differences, one a line, at most
// maxDiffLines; none means they match. The results of the tools named in
// ignoreTools are left out (see IgnoreToolResults).
func requestDiff(wantModel string, want []byte, gotModel string, got []byte, ignoreTools map[string]bool) []string {
	var lines []string
	if wantModel != gotModel {
		lines = append(lines, fmt.Sprintf("modelId: want %q, got %q", wantModel, gotModel))
	}
	wantV, err := decodeJSON(want)
	if err != nil {
		return append(lines, "body: the recorded body is not JSON: "+err.Error())
	}
	gotV, err := decodeJSON(got)
	if err != nil {
		return append(lines, "body: the request body is not JSON: "+err.Error())
	}
	if len(ignoreTools) > 0 {
		dropToolResults(wantV, ignoreTools)
		dropToolResults(gotV, ignoreTools)
	}
	diffJSON("", wantV, gotV, &lines)
	if len(lines) > maxDiffLines {
		more := len(lines) - (maxDiffLines - 1)
		lines = append(lines[:maxDiffLines-1], fmt.Sprintf("… and %d more differences", more))
	}
	return lines
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // compare numbers by value, without float rounding
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("data after the JSON value")
	}
	return v, nil
}

// dropToolResults deletes, in a decoded Converse request body, the content
// of the toolResult blocks that answer a toolUse of one of the named tools
// made in an earlier assistant message.
func dropToolResults(body any, names map[string]bool) {
	root, _ := body.(map[string]any)
	msgs, _ := root["messages"].([]any)
	ignored := make(map[string]bool) // toolUseIds of the named tools
	for _, msg := range msgs {
		m, _ := msg.(map[string]any)
		role, _ := m["role"].(string)
		content, _ := m["content"].([]any)
		for _, block := range content {
			b, _ := block.(map[string]any)
			if use, ok := b["toolUse"].(map[string]any); ok && role == "assistant" {
				name, _ := use["name"].(string)
				id, _ := use["toolUseId"].(string)
				if names[name] {
					ignored[id] = true
				}
			}
			if res, ok := b["toolResult"].(map[string]any); ok {
				id, _ := res["toolUseId"].(string)
				if ignored[id] {
					delete(res, "content")
				}
			}
		}
	}
}

// diffJSON appends to out a line for each difference between two decoded
// JSON values (decoded with UseNumber), found by walking both at once.
func diffJSON(path string, want, got any, out *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			wv, inW := w[k]
			gv, inG := g[k]
			p := jsonPathKey(path, k)
			switch {
			case !inG:
				*out = append(*out, fmt.Sprintf("%s: want %s, got nothing", p, showJSON(wv)))
			case !inW:
				*out = append(*out, fmt.Sprintf("%s: want nothing, got %s", p, showJSON(gv)))
			default:
				diffJSON(p, wv, gv, out)
			}
		}
		return
	case []any:
		g, ok := got.([]any)
		if !ok {
			break
		}
		for i := range max(len(w), len(g)) {
			p := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case i >= len(g):
				*out = append(*out, fmt.Sprintf("%s: want %s, got nothing", p, showJSON(w[i])))
			case i >= len(w):
				*out = append(*out, fmt.Sprintf("%s: want nothing, got %s", p, showJSON(g[i])))
			default:
				diffJSON(p, w[i], g[i], out)
			}
		}
		return
	case json.Number:
		if g, ok := got.(json.Number); ok && sameNumber(w, g) {
			return
		}
	case string, bool, nil:
		if want == got {
			return
		}
	}
	if path == "" {
		path = "body"
	}
	*out = append(*out, fmt.Sprintf("%s: want %s, got %s", path, showJSON(want), showJSON(got)))
}

func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, err1 := a.Float64()
	y, err2 := b.Float64()
	return err1 == nil && err2 == nil && x == y
}

var jsonIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// jsonPathKey extends a path with an object key: a.b, or a["b c"] for a key
// that is not an identifier.
func jsonPathKey(path, key string) string {
	if !jsonIdent.MatchString(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// maxShownJSON bounds a value shown in a diff line.
const maxShownJSON = 60

func showJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	s := strings.TrimSuffix(buf.String(), "\n")
	if r := []rune(s); len(r) > maxShownJSON {
		s = string(r[:maxShownJSON-1]) + "…"
	}
	return s
}
