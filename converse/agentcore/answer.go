package agentcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/aws/smithy-go"

	"github.com/tooluse/bedrock/converse"
)

// reply is the JSON answer of an invocation, and the last event of a
// stream (with Type set).
type reply struct {
	Type       string          `json:"type,omitempty"`
	Status     string          `json:"status"`
	Response   *string         `json:"response,omitempty"`
	SessionID  string          `json:"sessionId"`
	StopReason string          `json:"stopReason,omitempty"`
	Turns      int             `json:"turns,omitempty"`
	Usage      *usage          `json:"usage,omitempty"`
	Pending    []converse.Call `json:"pending,omitempty"`
	Error      string          `json:"error,omitempty"`
	ErrorType  string          `json:"errorType,omitempty"`
}

// usage is converse.Usage in Bedrock's JSON names.
type usage struct {
	InputTokens           int `json:"inputTokens"`
	OutputTokens          int `json:"outputTokens"`
	TotalTokens           int `json:"totalTokens"`
	CacheReadInputTokens  int `json:"cacheReadInputTokens"`
	CacheWriteInputTokens int `json:"cacheWriteInputTokens"`
}

func usageOf(u converse.Usage) *usage {
	return &usage{u.InputTokens, u.OutputTokens, u.TotalTokens, u.CacheReadInputTokens, u.CacheWriteInputTokens}
}

// The events of a stream before its last.
type (
	textEvent struct {
		Type string `json:"type"` // "text"
		Turn int    `json:"turn"`
		Text string `json:"text"`
	}
	toolStartEvent struct {
		Type  string          `json:"type"` // "toolStart"
		Turn  int             `json:"turn"`
		ID    string          `json:"toolUseId"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	toolEndEvent struct {
		Type   string          `json:"type"` // "toolEnd"
		Turn   int             `json:"turn"`
		ID     string          `json:"toolUseId"`
		Name   string          `json:"name"`
		Status string          `json:"status"`
		Output json.RawMessage `json:"output,omitempty"`
		Error  string          `json:"error,omitempty"`
	}
	turnEndEvent struct {
		Type       string `json:"type"` // "turnEnd"
		Turn       int    `json:"turn"`
		StopReason string `json:"stopReason"`
		Usage      *usage `json:"usage"`
	}
)

// answer writes the answer of one invocation: a JSON object, or a stream
// of events started by the first one.
type answer struct {
	w      http.ResponseWriter
	id     string
	stream bool

	mu      sync.Mutex
	started bool // the stream's status and headers are written
}

// event writes ev to the stream, if it is one the stream carries.
func (a *answer) event(ev converse.Event) {
	switch e := ev.(type) {
	case converse.Text:
		a.send(textEvent{"text", e.Turn, e.Text})
	case converse.ToolStart:
		a.send(toolStartEvent{"toolStart", e.Turn, e.ID, e.Name, e.Input})
	case converse.ToolEnd:
		te := toolEndEvent{Type: "toolEnd", Turn: e.Turn, ID: e.ID, Name: e.Name, Status: string(e.Status), Output: e.Output}
		if e.Err != nil {
			te.Error = e.Err.Error()
		}
		if te.Status == "" {
			te.Status = "success"
		}
		a.send(te)
	case converse.TurnEnd:
		a.send(turnEndEvent{"turnEnd", e.Turn, string(e.StopReason), usageOf(e.Usage)})
	}
}

// send writes one event, starting the stream if need be.
func (a *answer) send(v any) {
	b, err := json.Marshal(v)
	if err != nil { // output that is not JSON: say so rather than drop the event
		b, _ = json.Marshal(map[string]string{"type": "error", "error": "agentcore: an event could not be encoded: " + err.Error()})
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started {
		h := a.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		a.w.WriteHeader(http.StatusOK)
		a.started = true
	}
	fmt.Fprintf(a.w, "data: %s\n\n", b)
	_ = http.NewResponseController(a.w).Flush()
}

// finish answers with the outcome of the invocation.
func (a *answer) finish(conv *converse.Conversation, res *converse.Result, err error) {
	var paused *converse.PausedError
	switch {
	case err == nil:
		text := res.Text
		a.write(http.StatusOK, "result", reply{Status: "success", Response: &text, SessionID: a.id,
			StopReason: string(res.StopReason), Turns: res.Turns, Usage: usageOf(res.Usage)})
	case errors.As(err, &paused):
		a.write(http.StatusOK, "paused", reply{Status: "paused", SessionID: a.id, Pending: paused.Pending})
	case errors.Is(err, converse.ErrPaused): // a prompt for a paused session
		a.write(http.StatusConflict, "error", reply{Status: "error", SessionID: a.id, Pending: conv.State().Pending,
			Error: "agentcore: the session awaits decisions on its pending calls: send {\"decisions\": [...]} first"})
	default:
		a.fail(statusOf(err), err)
	}
}

// fail answers with an error; the error type of a Bedrock failure is
// Bedrock's.
func (a *answer) fail(status int, err error) {
	r := reply{Status: "error", SessionID: a.id, Error: err.Error()}
	if api, ok := bedrockError(err); ok {
		r.ErrorType = api.ErrorCode()
	}
	a.write(status, "error", r)
}

// bedrockError returns the AWS API error of a failed model call in err, if
// it holds one. The Store's errors (storeErrors) hold none: apart from the
// Store's, a conversation's only AWS calls are its model calls (Converse,
// ConverseStream, CountTokens). The error alone would not tell: an
// exception in a stream comes without the *smithy.OperationError that names
// the service of a failed call.
func bedrockError(err error) (smithy.APIError, bool) {
	var store *storeError
	var api smithy.APIError
	if errors.As(err, &store) || !errors.As(err, &api) {
		return nil, false
	}
	return api, true
}

// write writes the last event of a stream that started, or else the JSON
// answer with its status.
func (a *answer) write(status int, typ string, r reply) {
	a.mu.Lock()
	started := a.started
	a.mu.Unlock()
	if started || (a.stream && status == http.StatusOK) {
		r.Type = typ
		a.send(r)
		return
	}
	writeJSON(a.w, status, r)
}

// statusOf is the HTTP status of a failed invocation: 502 for Bedrock's
// errors, 400 for decisions that do not fit, 409 for a session held
// elsewhere or with nothing to resume, 500 for the rest, the Store's
// failures included.
func statusOf(err error) int {
	if _, ok := bedrockError(err); ok {
		return http.StatusBadGateway
	}
	switch {
	case errors.Is(err, converse.ErrDecision):
		return http.StatusBadRequest
	case errors.Is(err, converse.ErrSessionLocked), errors.Is(err, converse.ErrSessionChanged), errors.Is(err, converse.ErrNothingToResume):
		return http.StatusConflict
	case errors.Is(err, context.Canceled):
		return 499 // the caller went away; nobody reads this
	}
	return http.StatusInternalServerError
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"status":"error","error":"agentcore: the answer could not be encoded"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
