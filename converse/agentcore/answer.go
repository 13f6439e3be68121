package agentcore

import (
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
	CostUSD    *float64        `json:"costUSD,omitempty"`
	Limit      string          `json:"limit,omitempty"`
	Message    string          `json:"message,omitempty"`
	Pending    []converse.Call `json:"pending,omitempty"`
	Error      string          `json:"error,omitempty"`
	ErrorType  string          `json:"errorType,omitempty"`
	Resumed    *resumed        `json:"resumed,omitempty"`
}

// resumed is the Resume that a prompt for an interrupted session ran
// before it: its status, and what its model calls said and spent.
type resumed struct {
	Status     string   `json:"status"`
	Response   *string  `json:"response,omitempty"`
	StopReason string   `json:"stopReason,omitempty"`
	Turns      int      `json:"turns,omitempty"`
	Usage      *usage   `json:"usage,omitempty"`
	CostUSD    *float64 `json:"costUSD,omitempty"`
}

// ended is how a Send or Resume of an invocation ended.
type ended struct {
	res *converse.Result // nil if it was refused before a step
	err error
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

	// What the invocation's log record says: the HTTP status and the
	// answer (or last event) written, and the error that ended the
	// invocation with its class (a converse.Outcome, or "request" for a
	// request refused before the conversation ran).
	code  int
	reply reply
	err   error
	class string
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

// finish answers with the outcome of the invocation: last is the Send or
// Resume that ended it, and resumed, if not nil, the Resume that its
// prompt ran first (last itself, when that did not end with an answer).
func (a *answer) finish(conv *converse.Conversation, last, resumed *ended) {
	code, status := statusOf(last.err)
	r := reply{Status: status, SessionID: a.id}
	a.err, a.class = last.err, string(converse.Classify(last.err))
	if errors.Is(last.err, errStopping) { // not the caller's stop: another server can go on
		a.class = string(converse.OutcomeRetry)
	}
	if last.res != nil {
		r.Turns, r.Usage, r.CostUSD = last.res.Turns, usageOf(last.res.Usage), last.res.CostUSD
		if status != "error" {
			text := last.res.Text
			r.Response, r.StopReason = &text, string(last.res.StopReason)
		}
	}
	if resumed != nil {
		r.Resumed = resumedOf(resumed)
	}
	var paused *converse.PausedError
	switch {
	case errors.As(last.err, &paused):
		r.Pending = paused.Pending
	case errors.Is(last.err, converse.ErrPaused): // a prompt for a paused session
		r.Pending = conv.State().Pending
		r.Error = "agentcore: the session awaits decisions on its pending calls: send {\"decisions\": [...]} first"
	case status == "limit":
		r.Limit, r.Message = limitOf(last.err), last.err.Error()
	case status == "stopped":
		r.Message = last.err.Error()
	case last.err != nil:
		r.Error = publicError(code, last.err)
		if api, ok := bedrockError(last.err); ok {
			r.ErrorType = api.ErrorCode()
		}
	}
	a.write(code, r)
}

// resumedOf is the "resumed" of an answer.
func resumedOf(e *ended) *resumed {
	_, status := statusOf(e.err)
	r := &resumed{Status: status}
	if e.res != nil {
		text := e.res.Text
		r.Response, r.StopReason = &text, string(e.res.StopReason)
		r.Turns, r.Usage, r.CostUSD = e.res.Turns, usageOf(e.res.Usage), e.res.CostUSD
	}
	return r
}

// limitOf names the limit that err reports: "turns", or the Limit of a
// converse.BudgetError ("cost", "output tokens", ...).
func limitOf(err error) string {
	var budget *converse.BudgetError
	if errors.As(err, &budget) {
		return budget.Limit
	}
	return "turns"
}

// fail answers with an error found before the conversation ran.
func (a *answer) fail(status int, err error) {
	a.err, a.class = err, "request"
	switch status {
	case http.StatusConflict:
		a.class = string(converse.OutcomeConflict)
	case http.StatusInternalServerError:
		a.class = string(converse.OutcomeInternal)
	}
	a.write(status, reply{Status: "error", SessionID: a.id, Error: publicError(status, err)})
}

// publicError is what an answer with the HTTP status says of err: its
// message. A 500 is the exception. Its message may hold the server's
// paths (a filestore.Store's) and other things that are not the caller's.
// It says instead a sentence that sends the reader to the server's log,
// which has the message.
func publicError(status int, err error) string {
	if status != http.StatusInternalServerError {
		return err.Error()
	}
	var store *storeError
	if errors.As(err, &store) {
		return "agentcore: the session store failed; the server's log says why"
	}
	return "agentcore: the invocation failed inside the server; the server's log says why"
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
// answer with its status. The last event's type is "result" for an answer,
// else the status ("limit", "paused", "stopped" or "error").
func (a *answer) write(status int, r reply) {
	a.mu.Lock()
	started := a.started
	a.mu.Unlock()
	a.code, a.reply = status, r
	if started {
		a.code = http.StatusOK // already sent
	}
	if started || (a.stream && status == http.StatusOK) {
		r.Type = r.Status
		if r.Status == "success" {
			r.Type = "result"
		}
		a.send(r)
		return
	}
	if status == http.StatusServiceUnavailable {
		a.w.Header().Set("Retry-After", retryAfter)
	}
	writeJSON(a.w, status, r)
}

// retryAfter is the Retry-After of a 503, in seconds: the SDK's retryer
// has already waited out the short failures.
const retryAfter = "5"

// statusOf is the HTTP status and the "status" field of an invocation that
// ended with err, by its converse.Outcome (see the package doc), or a 503
// for one that Stop cut off. A failure of the Store is a 500, whatever it
// holds, unless it is a conflict; Bedrock's failures not worth retrying
// are a 502.
func statusOf(err error) (int, string) {
	if errors.Is(err, errStopping) {
		return http.StatusServiceUnavailable, "error"
	}
	outcome := converse.Classify(err)
	switch outcome {
	case "":
		return http.StatusOK, "success"
	case converse.OutcomeLimit, converse.OutcomePaused, converse.OutcomeStopped:
		return http.StatusOK, string(outcome)
	case converse.OutcomeConflict:
		return http.StatusConflict, "error"
	}
	var store *storeError
	_, bedrock := bedrockError(err)
	switch {
	case errors.As(err, &store):
		return http.StatusInternalServerError, "error"
	case outcome == converse.OutcomeRetry:
		return http.StatusServiceUnavailable, "error"
	case bedrock:
		return http.StatusBadGateway, "error"
	case outcome == converse.OutcomeCaller:
		return http.StatusBadRequest, "error"
	}
	return http.StatusInternalServerError, "error"
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
