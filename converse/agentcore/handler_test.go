package agentcore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/agentcore"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/tools"
)

const model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

// session is a session id as the runtime makes them: 33 characters or more.
const session = "0123456789abcdef0123456789abcdef-1"

// front calls a Handler's server as AgentCore Runtime does, with net/http's
// client.
type front struct {
	t   *testing.T
	url string
}

// serve starts a Handler for the Bedrock of bed and the tools of reg, its
// sessions in dir.
func serve(t *testing.T, bed *bedrocktest.Server, reg *tools.Registry, dir string, optFns ...func(*agentcore.Options)) *front {
	t.Helper()
	h := agentcore.New(bed.Client(), model, reg, append([]func(*agentcore.Options){func(o *agentcore.Options) {
		o.Store = filestore.Store{Dir: dir}
		o.Logger = slog.New(slog.DiscardHandler)
	}}, optFns...)...)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &front{t: t, url: srv.URL}
}

// invoke posts body to /invocations for the session (none if empty).
func (f *front) invoke(ctx context.Context, session, body string, header ...string) *http.Response {
	f.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url+"/invocations", strings.NewReader(body))
	require.NoError(f.t, err)
	req.Header.Set("Content-Type", "application/json")
	if session != "" {
		req.Header.Set(agentcore.SessionHeader, session)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(f.t, err)
	return resp
}

// answer is the JSON answer of an invocation, or a stream's event.
type answer struct {
	Type       string          `json:"type"`
	Status     string          `json:"status"`
	Response   string          `json:"response"`
	SessionID  string          `json:"sessionId"`
	StopReason string          `json:"stopReason"`
	Turns      int             `json:"turns"`
	Usage      map[string]int  `json:"usage"`
	CostUSD    float64         `json:"costUSD"`
	Limit      string          `json:"limit"`
	Message    string          `json:"message"`
	Pending    []converse.Call `json:"pending"`
	Error      string          `json:"error"`
	ErrorType  string          `json:"errorType"`
	Text       string          `json:"text"`
	Name       string          `json:"name"`
	ID         string          `json:"toolUseId"`
	Output     json.RawMessage `json:"output"`
	Resumed    *answer         `json:"resumed"`
}

// call invokes and decodes the JSON answer, checking its status code.
func (f *front) call(session, body string, code int) answer {
	f.t.Helper()
	resp := f.invoke(context.Background(), session, body)
	defer resp.Body.Close()
	require.Equal(f.t, "application/json", resp.Header.Get("Content-Type"))
	var a answer
	require.NoError(f.t, json.NewDecoder(resp.Body).Decode(&a))
	require.Equal(f.t, code, resp.StatusCode, "answer: %+v", a)
	return a
}

// invokeAsync invokes in a goroutine; the channel gets its answer.
func (f *front) invokeAsync(session, body string) <-chan answer {
	done := make(chan answer, 1)
	go func() {
		resp := f.invoke(context.Background(), session, body)
		defer resp.Body.Close()
		var a answer
		_ = json.NewDecoder(resp.Body).Decode(&a)
		done <- a
	}()
	return done
}

// events reads a stream of server-sent events: each data line's JSON.
func events(t *testing.T, body io.Reader) []answer {
	t.Helper()
	var out []answer
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			require.Empty(t, sc.Text(), "a line that is neither data nor the blank line ending an event")
			continue
		}
		var a answer
		require.NoError(t, json.Unmarshal([]byte(data), &a), data)
		out = append(out, a)
	}
	require.NoError(t, sc.Err())
	return out
}

// ping is GET /ping's answer.
type ping struct {
	Status           string `json:"status"`
	TimeOfLastUpdate int64  `json:"time_of_last_update"`
}

func (f *front) ping() ping {
	f.t.Helper()
	resp, err := http.Get(f.url + "/ping")
	require.NoError(f.t, err)
	defer resp.Body.Close()
	require.Equal(f.t, http.StatusOK, resp.StatusCode)
	var p ping
	require.NoError(f.t, json.NewDecoder(resp.Body).Decode(&p))
	return p
}

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

func adder(t *testing.T, runs *atomic.Int32, optFns ...func(*tools.Options)) *tools.Tool {
	t.Helper()
	add, err := tools.New("add", "Adds two numbers.", func(ctx context.Context, in addIn) (int, error) {
		runs.Add(1)
		return in.A + in.B, nil
	}, optFns...)
	require.NoError(t, err)
	return add
}

func registry(t *testing.T, ts ...*tools.Tool) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(ts...)
	require.NoError(t, err)
	return reg
}

func TestInvokeJSON(t *testing.T) {
	var runs atomic.Int32
	bed := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "add", Input: map[string]any{"a": 2, "b": 2}}),
		bedrocktest.Text("It is 4."),
	))
	defer bed.Close()
	f := serve(t, bed, registry(t, adder(t, &runs)), t.TempDir())

	resp := f.invoke(context.Background(), session, `{"prompt": "What is 2 + 2?"}`)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, session, resp.Header.Get(agentcore.SessionHeader))
	var a answer
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
	assert.Equal(t, answer{Status: "success", Response: "It is 4.", SessionID: session, StopReason: "end_turn", Turns: 2, Usage: a.Usage, CostUSD: a.CostUSD}, a)
	assert.Positive(t, a.CostUSD, "at the model's prices")
	assert.Positive(t, a.Usage["totalTokens"])
	assert.EqualValues(t, 1, runs.Load())
	assert.Equal(t, "Converse", bed.Requests()[0].Operation, "no stream asked for")
}

func TestInvokeWithoutSessionStartsOne(t *testing.T) {
	bed := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("one"), bedrocktest.Text("two")))
	defer bed.Close()
	f := serve(t, bed, registry(t), t.TempDir())

	first := f.call("", `{"prompt": "hi"}`, http.StatusOK)
	require.GreaterOrEqual(t, len(first.SessionID), 33)
	second := f.call(first.SessionID, `{"prompt": "again"}`, http.StatusOK)
	assert.Equal(t, "two", second.Response)
	assert.Len(t, bed.Requests()[1].Messages, 3, "the second invocation continues the session the first started")
}

func TestInvokeStream(t *testing.T) {
	for _, how := range []struct {
		name   string
		body   string
		header []string
	}{
		{"stream field", `{"prompt": "What is 2 + 2?", "stream": true}`, nil},
		{"Accept header", `{"prompt": "What is 2 + 2?"}`, []string{"Accept", "application/json, text/event-stream"}},
	} {
		t.Run(how.name, func(t *testing.T) {
			var runs atomic.Int32
			bed := bedrocktest.NewServer(bedrocktest.Script(
				bedrocktest.ToolUse("Adding.", bedrocktest.Call{ID: "t1", Name: "add", Input: map[string]any{"a": 2, "b": 2}}),
				bedrocktest.Text("It is 4."),
			))
			defer bed.Close()
			f := serve(t, bed, registry(t, adder(t, &runs)), t.TempDir())

			resp := f.invoke(context.Background(), session, how.body, how.header...)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
			evs := events(t, resp.Body)

			var kinds []string
			var text strings.Builder
			for _, e := range evs {
				if len(kinds) == 0 || kinds[len(kinds)-1] != e.Type {
					kinds = append(kinds, e.Type)
				}
				if e.Type == "text" {
					text.WriteString(e.Text)
				}
			}
			assert.Equal(t, []string{"text", "turnEnd", "toolStart", "toolEnd", "text", "turnEnd", "result"}, kinds)
			assert.Equal(t, "Adding.It is 4.", text.String(), "text comes in deltas")
			for _, e := range evs {
				if e.Type == "toolEnd" {
					assert.Equal(t, "add", e.Name)
					assert.JSONEq(t, "4", string(e.Output))
				}
			}
			last := evs[len(evs)-1]
			assert.Equal(t, "success", last.Status)
			assert.Equal(t, "It is 4.", last.Response)
			assert.Positive(t, last.Usage["totalTokens"])
			assert.Equal(t, "ConverseStream", bed.Requests()[0].Operation)
		})
	}
}

// TestSessionAcrossInvocationsAndRestarts: the second invocation of a
// session continues it, and so does a third after the server is replaced
// by a new one on the same store.
func TestSessionAcrossInvocationsAndRestarts(t *testing.T) {
	bed := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("one"), bedrocktest.Text("two"), bedrocktest.Text("three")))
	defer bed.Close()
	dir := t.TempDir()

	f := serve(t, bed, registry(t), dir)
	f.call(session, `{"prompt": "first"}`, http.StatusOK)
	f.call(session, `{"prompt": "second"}`, http.StatusOK)
	restarted := serve(t, bed, registry(t), dir)
	a := restarted.call(session, `{"prompt": "third"}`, http.StatusOK)
	assert.Equal(t, "three", a.Response)

	reqs := bed.Requests()
	require.Len(t, reqs, 3)
	assert.Len(t, reqs[1].Messages, 3)
	assert.Len(t, reqs[2].Messages, 5, "the restarted server loaded the session from the store")
}

// TestConversationHookSeesTheSession: Options.Conversation is called with
// the invocation's session set, new and restored alike, and a Session it
// sets is not the one used.
func TestConversationHookSeesTheSession(t *testing.T) {
	bed := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("one"), bedrocktest.Text("two")))
	defer bed.Close()
	dir := t.TempDir()
	var seen []string
	f := serve(t, bed, registry(t), dir, func(o *agentcore.Options) {
		o.Conversation = func(o *converse.Options) {
			id := "no session" // a handler's goroutine: no require here
			if o.Session != nil {
				id = o.Session.ID
			}
			seen = append(seen, id)
			o.Session = &converse.Session{Store: filestore.Store{Dir: t.TempDir()}, ID: "elsewhere"}
		}
	})
	f.call(session, `{"prompt": "first"}`, http.StatusOK)
	f.call(session, `{"prompt": "second"}`, http.StatusOK)
	assert.Equal(t, []string{session, session}, seen, "a new session, then the restored one")
	st, err := filestore.Store{Dir: dir}.Load(context.Background(), session)
	require.NoError(t, err, "the session was kept in the Handler's store")
	assert.Len(t, st.Messages, 4)
}

// TestApprovalOverTheContract: a call that needs approval pauses the
// invocation, which answers with it; a prompt is then refused; the next
// invocation's decisions run it.
func TestApprovalOverTheContract(t *testing.T) {
	var runs atomic.Int32
	bed := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "add", Input: map[string]any{"a": 1, "b": 2}}),
		bedrocktest.Text("It is 3."),
	))
	defer bed.Close()
	add := adder(t, &runs, func(o *tools.Options) { o.RequireApproval = true })
	f := serve(t, bed, registry(t, add), t.TempDir())

	paused := f.call(session, `{"prompt": "What is 1 + 2?"}`, http.StatusOK)
	assert.Equal(t, "paused", paused.Status)
	require.Len(t, paused.Pending, 1)
	assert.Equal(t, converse.Call{ID: "t1", Tool: "add", Input: json.RawMessage(`{"a":1,"b":2}`)}, paused.Pending[0])
	assert.Zero(t, runs.Load())

	refused := f.call(session, `{"prompt": "Well?"}`, http.StatusConflict)
	assert.Contains(t, refused.Error, "awaits decisions")
	assert.Len(t, refused.Pending, 1)

	wrong := f.call(session, `{"decisions": [{"toolUseId": "t9", "verdict": "approved"}]}`, http.StatusBadRequest)
	assert.Contains(t, wrong.Error, "t9")

	done := f.call(session, `{"decisions": [{"toolUseId": "t1", "verdict": "approved"}]}`, http.StatusOK)
	assert.Equal(t, "It is 3.", done.Response)
	assert.EqualValues(t, 1, runs.Load())
}

func TestDenialOverTheContract(t *testing.T) {
	var runs atomic.Int32
	bed := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "add", Input: map[string]any{"a": 1, "b": 2}}),
		bedrocktest.Text("I may not."),
	))
	defer bed.Close()
	add := adder(t, &runs, func(o *tools.Options) { o.RequireApproval = true })
	f := serve(t, bed, registry(t, add), t.TempDir())

	f.call(session, `{"prompt": "What is 1 + 2?"}`, http.StatusOK)
	f.call(session, `{"decisions": [{"toolUseId": "t1", "verdict": "denied", "reason": "not today"}]}`, http.StatusOK)
	assert.Zero(t, runs.Load())
	results := bed.Requests()[1].Messages[2]
	b, err := json.Marshal(results.Content)
	require.NoError(t, err)
	assert.Contains(t, string(b), "the call was denied by the caller: not today")
}

// gated is a tool that signals its start and waits for the gate, or for its
// context to end (which it reports).
func gated(t *testing.T, started chan<- struct{}, gate <-chan struct{}, cancelled chan<- error) *tools.Tool {
	t.Helper()
	slow, err := tools.New("slow", "Takes its time.", func(ctx context.Context, _ struct{}) (string, error) {
		started <- struct{}{}
		select {
		case <-gate:
			return "done", nil
		case <-ctx.Done():
			cancelled <- ctx.Err()
			return "", ctx.Err()
		}
	})
	require.NoError(t, err)
	return slow
}

// TestPingDuringASlowTool is the runtime's view. Pings every few hundred
// milliseconds while a tool runs answer HealthyBusy. They do not wait on
// the conversation, whose tool waits on the test. A second invocation of
// the session is refused. Once the answer is in, ping says Healthy with a
// later time_of_last_update.
func TestPingDuringASlowTool(t *testing.T) {
	bed := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "slow", Input: map[string]any{}}),
		bedrocktest.Text("Done."),
	))
	defer bed.Close()
	started, gate, cancelled := make(chan struct{}, 1), make(chan struct{}), make(chan error, 1)
	f := serve(t, bed, registry(t, gated(t, started, gate, cancelled)), t.TempDir())

	idle := f.ping()
	assert.Equal(t, "Healthy", idle.Status)

	done := f.invokeAsync(session, `{"prompt": "Go slowly."}`)
	<-started

	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var busy ping
	for range 3 {
		<-tick.C
		busy = f.ping()
		assert.Equal(t, "HealthyBusy", busy.Status)
	}
	assert.GreaterOrEqual(t, busy.TimeOfLastUpdate, idle.TimeOfLastUpdate)

	refused := f.call(session, `{"prompt": "And now?"}`, http.StatusConflict)
	assert.Contains(t, refused.Error, "is running an invocation")

	close(gate)
	assert.Equal(t, "Done.", (<-done).Response)
	after := f.ping()
	assert.Equal(t, "Healthy", after.Status)
	assert.GreaterOrEqual(t, after.TimeOfLastUpdate, busy.TimeOfLastUpdate)
}

// cutOff is the Bedrock of a conversation cut off in its call of the tool
// "slow": the call, the answer of the Resume that the next prompt runs
// first, then that prompt's.
func cutOff() *bedrocktest.Server {
	return bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "slow", Input: map[string]any{}}),
		bedrocktest.Text("Sorry, the call was cut off."),
		bedrocktest.Text("Hello again."),
	))
}

// TestCallerGoesAway: a caller that hangs up cancels its conversation,
// which keeps its steps; the next invocation of the session goes on.
func TestCallerGoesAway(t *testing.T) {
	bed := cutOff()
	defer bed.Close()
	started, gate, cancelled := make(chan struct{}, 1), make(chan struct{}), make(chan error, 1)
	f := serve(t, bed, registry(t, gated(t, started, gate, cancelled)), t.TempDir())

	ctx, hangUp := context.WithCancel(context.Background())
	failed := make(chan error)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url+"/invocations", strings.NewReader(`{"prompt": "Go slowly."}`))
		req.Header.Set(agentcore.SessionHeader, session)
		_, err := http.DefaultClient.Do(req)
		failed <- err
	}()
	<-started
	hangUp()
	require.ErrorIs(t, <-failed, context.Canceled)
	require.ErrorIs(t, <-cancelled, context.Canceled, "the tool's context ended with the caller's request")

	for f.ping().Status != "Healthy" { // the handler returns once the conversation has
		time.Sleep(10 * time.Millisecond)
	}
	a := f.call(session, `{"prompt": "Are you there?"}`, http.StatusOK)
	assert.Equal(t, "Hello again.", a.Response)
}

func TestBadInvocations(t *testing.T) {
	bed := bedrocktest.NewServer(bedrocktest.Script())
	defer bed.Close()
	f := serve(t, bed, registry(t), t.TempDir())

	for _, tc := range []struct {
		name, session, body, contentType, want string
		status                                 int
	}{
		{"not JSON", session, `prompt: hi`, "", `the body is not {"prompt": "..."}`, http.StatusBadRequest},
		{"a string", session, `"hi"`, "", `the body is a string: want an object, {"prompt": "..."}`, http.StatusBadRequest},
		{"a number for the prompt", session, `{"prompt": 42}`, "", `the body's "prompt" is a number: want a string`, http.StatusBadRequest},
		{"an object for the decisions", session, `{"decisions": {}}`, "", `the body's "decisions" is an object: want an array`, http.StatusBadRequest},
		{"a number for a call's id", session, `{"decisions": [{"toolUseId": 1}]}`, "", `the body's "decisions": "toolUseId" is a number: want a string`, http.StatusBadRequest},
		{"cut short", session, `{"prompt": "hi"`, "", "it ends before its JSON does", http.StatusBadRequest},
		{"nothing to do", session, `{}`, "", `no "prompt" and no "decisions"`, http.StatusBadRequest},
		{"both", session, `{"prompt": "hi", "decisions": [{"toolUseId": "t1", "verdict": "approved"}]}`, "", "both", http.StatusBadRequest},
		{"two objects", session, `{"prompt": "a"} {"prompt": "b"}`, "", "data after", http.StatusBadRequest},
		{"form", session, `prompt=hi`, "application/x-www-form-urlencoded", "want application/json", http.StatusUnsupportedMediaType},
		{"octet-stream that is not JSON", session, "\x00\x01", "application/octet-stream", `the body is not {"prompt": "..."}`, http.StatusBadRequest},
		{"session id with a slash", "../etc/passwd", `{"prompt": "hi"}`, "", "want up to 256 letters", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var header []string
			if tc.contentType != "" {
				header = []string{"Content-Type", tc.contentType}
			}
			resp := f.invoke(context.Background(), tc.session, tc.body, header...)
			defer resp.Body.Close()
			var a answer
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Equal(t, "error", a.Status)
			assert.Contains(t, a.Error, tc.want)
			assert.NotRegexp(t, `Go (struct|value)|of type|agentcore\.`, a.Error, "JSON's words, not Go's")
		})
	}
	assert.Empty(t, bed.Requests(), "no model was called")

	resp, err := http.Get(f.url + "/invocations")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

func TestBedrockFailure(t *testing.T) {
	for _, stream := range []bool{false, true} {
		bed := bedrocktest.NewServer(bedrocktest.Fail(1, bedrocktest.AccessDenied("You don't have access to the model."), bedrocktest.Script()))
		f := serve(t, bed, registry(t), t.TempDir())
		body := `{"prompt": "hi"}`
		if stream {
			body = `{"prompt": "hi", "stream": true}`
		}
		a := f.call(session, body, http.StatusBadGateway)
		assert.Equal(t, "AccessDeniedException", a.ErrorType)
		assert.Contains(t, a.Error, "access to the model")
		bed.Close()
	}
}

// TestFailureAfterTheStreamStarted: a failure after events were sent is the
// stream's last event.
func TestFailureAfterTheStreamStarted(t *testing.T) {
	var runs atomic.Int32
	bed := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "add", Input: map[string]any{"a": 1, "b": 1}}),
	)) // the second call exhausts the script: a ValidationException
	defer bed.Close()
	f := serve(t, bed, registry(t, adder(t, &runs)), t.TempDir())
	resp := f.invoke(context.Background(), session, `{"prompt": "hi", "stream": true}`)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	evs := events(t, resp.Body)
	last := evs[len(evs)-1]
	assert.Equal(t, "error", last.Type)
	assert.Equal(t, "ValidationException", last.ErrorType)
}

// TestConcurrentInvocationsAreBounded: past Options.MaxConcurrent running
// invocations, one more is refused with 503 and Retry-After, before its
// body is read; once one ends, the next is taken.
func TestConcurrentInvocationsAreBounded(t *testing.T) {
	bed := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "slow", Input: map[string]any{}}),
		bedrocktest.Text("Done."),
		bedrocktest.Text("Next."),
	))
	defer bed.Close()
	started, gate, cancelled := make(chan struct{}, 1), make(chan struct{}), make(chan error, 1)
	f := serve(t, bed, registry(t, gated(t, started, gate, cancelled)), t.TempDir(), func(o *agentcore.Options) { o.MaxConcurrent = 1 })

	done := f.invokeAsync(session, `{"prompt": "Go slowly."}`)
	<-started
	resp := f.invoke(context.Background(), session+"-other", `{"prompt": "Me too."}`)
	var busy answer
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&busy))
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	assert.Contains(t, busy.Error, "1 invocations are running, the most this server takes at once")

	close(gate)
	assert.Equal(t, "Done.", (<-done).Response)
	assert.Equal(t, "Next.", f.call(session+"-other", `{"prompt": "Me too."}`, http.StatusOK).Response)
}

// TestQuestionOverTheContract: a tool's question pauses the invocation,
// whose answer lists it; an answer that breaks its schema is refused; the
// next invocation's answer runs the call again with it.
func TestQuestionOverTheContract(t *testing.T) {
	bed := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "deploy", Input: map[string]any{}}),
		bedrocktest.Text("Deployed."),
	))
	defer bed.Close()
	var runs atomic.Int32
	deploy, err := tools.NewRaw("deploy", "Deploys.", json.RawMessage(`{"type":"object"}`), func(ctx context.Context, _ json.RawMessage) (any, error) {
		runs.Add(1)
		if a, ok := tools.AnswerOf(ctx); ok {
			var in struct{ Env string }
			if err := json.Unmarshal(a.Content, &in); err != nil {
				return nil, err
			}
			return string(a.Action) + " " + in.Env, nil
		}
		return nil, &tools.InputRequiredError{Question: tools.Question{Message: "Where?",
			Schema: json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}`)}}
	})
	require.NoError(t, err)
	f := serve(t, bed, registry(t, deploy), t.TempDir())

	paused := f.call(session, `{"prompt": "Deploy."}`, http.StatusOK)
	assert.Equal(t, "paused", paused.Status)
	require.Len(t, paused.Pending, 1)
	require.NotNil(t, paused.Pending[0].Question)
	assert.Equal(t, "Where?", paused.Pending[0].Question.Message)

	bad := f.call(session, `{"decisions": [{"toolUseId": "t1", "verdict": "accepted", "answer": {"env": 1}}]}`, http.StatusBadRequest)
	assert.Contains(t, bad.Error, "answer")
	assert.EqualValues(t, 1, runs.Load(), "the bad answer reached no tool")

	done := f.call(session, `{"decisions": [{"toolUseId": "t1", "verdict": "accepted", "answer": {"env": "staging"}}]}`, http.StatusOK)
	assert.Equal(t, "Deployed.", done.Response)
	assert.Contains(t, string(bed.Requests()[1].Body), "accept staging")
}
