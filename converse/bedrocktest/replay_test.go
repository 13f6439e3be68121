package bedrocktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/tooluse/bedrock/converse/recording"
)

// replayToolBody is a request body in which the assistant called tool and
// the user answered with result.
func replayToolBody(tool, result, status string) string {
	return `{"messages":[` +
		`{"role":"user","content":[{"text":"Go"}]},` +
		`{"role":"assistant","content":[{"toolUse":{"toolUseId":"tu1","name":"` + tool + `","input":{}}}]},` +
		`{"role":"user","content":[{"toolResult":{"toolUseId":"tu1","content":[{"text":"` + result + `"}],"status":"` + status + `"}}]}` +
		`]}`
}

// replayFixture has a Converse exchange, a stream that ends in an exception
// and a recorded error.
func replayFixture() *recording.Recording {
	return &recording.Recording{Version: 1, Exchanges: []recording.Exchange{
		{
			Operation: recording.OpConverse, ModelID: "m1",
			Request:  json.RawMessage(replayToolBody("get_current_datetime", "2025-01-01T10:00:00Z", "success")),
			Status:   200,
			Response: json.RawMessage(`{"output":{"message":{"role":"assistant","content":[{"text":"It is ten."}]}},"stopReason":"end_turn"}`),
		},
		{
			Operation: recording.OpConverseStream, ModelID: "m1",
			Request: json.RawMessage(`{"messages":[{"role":"user","content":[{"text":"Stream"}]}]}`),
			Status:  200,
			Events: []recording.Event{
				{Type: "messageStart", Payload: json.RawMessage(`{"role":"assistant"}`)},
				{Type: "contentBlockStop", Payload: json.RawMessage(`null`)},
				{Type: "modelStreamErrorException", Payload: json.RawMessage(`{"message":"stream broke"}`)},
			},
		},
		{
			Operation: recording.OpConverse, ModelID: "m1",
			Request:   json.RawMessage(`{"messages":[]}`),
			Status:    429,
			ErrorType: "ThrottlingException",
			Response:  json.RawMessage(`{"message":"Too many requests, please wait before trying again."}`),
		},
	}}
}

// replayRequests are requests matching replayFixture, as a server builds
// them (only the fields Replay reads).
func replayRequests() []*Request {
	rec := replayFixture()
	reqs := make([]*Request, len(rec.Exchanges))
	for i, x := range rec.Exchanges {
		reqs[i] = &Request{Operation: x.Operation, Body: []byte(x.Request), ConverseInput: bedrockruntime.ConverseInput{ModelId: aws.String(x.ModelID)}}
	}
	return reqs
}

func wantReplayError(t *testing.T, err error, status int, typ, message string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v, want an *Error", err)
	}
	if e.Status != status || e.Type != typ || !strings.HasPrefix(e.Message, message) {
		t.Errorf("error %d %s %q, want %d %s %q…", e.Status, e.Type, e.Message, status, typ, message)
	}
}

func TestReplayServesInOrder(t *testing.T) {
	ctx := context.Background()
	rec := replayFixture()
	h := Replay(rec)
	reqs := replayRequests()
	rec.Exchanges[0].Response[2] = 'X' // Replay works on a copy

	reply, err := h.ServeConverse(ctx, reqs[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := replayFixture().Exchanges[0].Response; string(reply.Raw) != string(want) {
		t.Errorf("Raw = %s, want %s", reply.Raw, want)
	}

	reply, err = h.ServeConverse(ctx, reqs[1])
	if err != nil {
		t.Fatal(err)
	}
	wantEvents := []recording.Event{
		{Type: "messageStart", Payload: json.RawMessage(`{"role":"assistant"}`)},
		{Type: "contentBlockStop", Payload: nil},
	}
	if !reflect.DeepEqual(reply.Events, wantEvents) {
		t.Errorf("Events = %+v, want %+v", reply.Events, wantEvents)
	}
	if want := (&Exception{Type: "modelStreamErrorException", Message: "stream broke"}); !reflect.DeepEqual(reply.Exception, want) || reply.ExceptionAfter != 2 {
		t.Errorf("Exception = %+v after %d, want %+v after 2", reply.Exception, reply.ExceptionAfter, want)
	}

	_, err = h.ServeConverse(ctx, reqs[2])
	wantReplayError(t, err, 429, "ThrottlingException", "Too many requests, please wait before trying again.")

	_, err = h.ServeConverse(ctx, reqs[2])
	wantReplayError(t, err, 400, "ValidationException", "recording: replay: request 4 but the recording has 3 exchanges")
}

func TestReplayStreamOfOnlyAnException(t *testing.T) {
	h := Replay(&recording.Recording{Version: 1, Exchanges: []recording.Exchange{{
		Operation: recording.OpConverseStream, ModelID: "m", Request: json.RawMessage(`{}`), Status: 200,
		Events: []recording.Event{{Type: "throttlingException", Payload: json.RawMessage(`{"message":"slow down"}`)}},
	}}})
	reply, err := h.ServeConverse(context.Background(), &Request{Operation: recording.OpConverseStream, Body: []byte(`{}`), ConverseInput: bedrockruntime.ConverseInput{ModelId: aws.String("m")}})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Events == nil || len(reply.Events) != 0 || reply.Exception == nil || reply.Exception.Message != "slow down" {
		t.Errorf("reply %+v, want no events (but a non-nil slice) and the exception", reply)
	}
}

func TestReplayOperationMismatch(t *testing.T) {
	h := Replay(replayFixture())
	req := replayRequests()[0]
	req.Operation = recording.OpConverseStream
	_, err := h.ServeConverse(context.Background(), req)
	wantReplayError(t, err, 400, "ValidationException",
		"recording: replay: request 1 is ConverseStream but exchange 1 of the recording is Converse")
}

func TestReplayChecksRequests(t *testing.T) {
	ctx := context.Background()
	changed := replayRequests()[0]
	changed.Body = []byte(replayToolBody("get_current_datetime", "2025-06-30T17:42:09Z", "success"))
	changed.ModelId = aws.String("m2")

	// Lenient lets anything go.
	if _, err := Replay(replayFixture(), func(o *recording.ReplayOptions) { o.Lenient = true }).ServeConverse(ctx, changed); err != nil {
		t.Errorf("lenient replay: %v", err)
	}

	_, err := Replay(replayFixture()).ServeConverse(ctx, changed)
	wantReplayError(t, err, 400, "ValidationException", "recording: replay: request 1 differs from the recording:\n"+
		`  modelId: want "m1", got "m2"`+"\n"+
		`  messages[2].content[0].toolResult.content[0].text: want "2025-01-01T10:00:00Z", got "2025-06-30T17:42:09Z"`)

	// IgnoreToolResults leaves the time out.
	_, err = Replay(replayFixture(), ignoreClock).ServeConverse(ctx, changed)
	wantReplayError(t, err, 400, "ValidationException", "recording: replay: request 1 differs from the recording:\n"+
		`  modelId: want "m1", got "m2"`)
	var e *Error
	if errors.As(err, &e) && strings.Contains(e.Message, "toolResult") {
		t.Errorf("the ignored tool result is in the diff: %s", e.Message)
	}

	changed.ModelId = aws.String("m1")
	if _, err := Replay(replayFixture(), ignoreClock).ServeConverse(ctx, changed); err != nil {
		t.Errorf("IgnoreToolResults: %v", err)
	}
}

func TestReplayExchangeUsedUpByError(t *testing.T) {
	ctx := context.Background()
	h := Replay(replayFixture())
	bad := replayRequests()[0]
	bad.Body = []byte(`{"messages":[]}`)
	if _, err := h.ServeConverse(ctx, bad); err == nil {
		t.Fatal("a differing request was served")
	}
	if _, err := h.ServeConverse(ctx, replayRequests()[1]); err != nil {
		t.Errorf("the next request did not get the next exchange: %v", err)
	}
}

func TestReplayInvalidExchange(t *testing.T) {
	h := Replay(&recording.Recording{Version: 1, Exchanges: []recording.Exchange{{Operation: recording.OpConverse, ModelID: "m", Request: json.RawMessage(`{}`), Status: 200}}})
	_, err := h.ServeConverse(context.Background(), &Request{Operation: recording.OpConverse, Body: []byte(`{}`), ConverseInput: bedrockruntime.ConverseInput{ModelId: aws.String("m")}})
	wantReplayError(t, err, 400, "ValidationException",
		"recording: replay: exchange 1 of the recording: a successful Converse exchange has no response body")

	_, err = Replay(nil).ServeConverse(context.Background(), &Request{Operation: recording.OpConverse})
	wantReplayError(t, err, 400, "ValidationException", "recording: replay: request 1 but the recording has 0 exchanges")
}

// fakeTB records what ReplayT reports, so a test can see it fail another.
type fakeTB struct {
	testing.TB
	cleanups []func()
	errs     []string
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func TestReplayTUnusedExchanges(t *testing.T) {
	ctx := context.Background()
	for used, want := range map[int]string{
		0: "recording: replay: 3 of 3 recorded exchanges unused, from exchange 1 (Converse m1)",
		2: "recording: replay: 1 of 3 recorded exchanges unused, from exchange 3 (Converse m1)",
		3: "",
		4: "", // the call too many got its own error
	} {
		t.Run(fmt.Sprint(used), func(t *testing.T) {
			tb := &fakeTB{TB: t}
			h := ReplayT(tb, replayFixture())
			for i := range used {
				_, _ = h.ServeConverse(ctx, replayRequests()[min(i, 2)])
			}
			if len(tb.errs) != 0 {
				t.Fatalf("failed before the test ended: %q", tb.errs)
			}
			for _, fn := range tb.cleanups {
				fn()
			}
			var got string
			if len(tb.errs) > 0 {
				got = strings.Join(tb.errs, "\n")
			}
			if got != want {
				t.Errorf("at the end: %q, want %q", got, want)
			}
		})
	}
}

func ignoreClock(o *recording.ReplayOptions) {
	o.IgnoreToolResults = []string{"get_current_datetime"}
}
