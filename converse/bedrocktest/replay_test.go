package bedrocktest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.ErrorAs(t, err, &e)
	assert.Equal(t, status, e.Status, "status")
	assert.Equal(t, typ, e.Type, "type")
	assert.True(t, strings.HasPrefix(e.Message, message), "message %q, want %q…", e.Message, message)
}

func TestReplayServesInOrder(t *testing.T) {
	ctx := context.Background()
	rec := replayFixture()
	h := Replay(rec)
	reqs := replayRequests()
	rec.Exchanges[0].Response[2] = 'X' // Replay works on a copy

	reply, err := h.ServeConverse(ctx, reqs[0])
	require.NoError(t, err)
	assert.Equal(t, string(replayFixture().Exchanges[0].Response), string(reply.Raw), "Raw")

	reply, err = h.ServeConverse(ctx, reqs[1])
	require.NoError(t, err)
	wantEvents := []recording.Event{
		{Type: "messageStart", Payload: json.RawMessage(`{"role":"assistant"}`)},
		{Type: "contentBlockStop", Payload: nil},
	}
	assert.Equal(t, wantEvents, reply.Events, "Events")
	assert.Equal(t, &Exception{Type: "modelStreamErrorException", Message: "stream broke"}, reply.Exception, "Exception")
	assert.Equal(t, 2, reply.ExceptionAfter, "ExceptionAfter")

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
	require.NoError(t, err)
	assert.NotNil(t, reply.Events, "no events, but a non-nil slice")
	assert.Empty(t, reply.Events, "no events")
	require.NotNil(t, reply.Exception, "the exception")
	assert.Equal(t, "slow down", reply.Exception.Message)
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
	_, err := Replay(replayFixture(), func(o *recording.ReplayOptions) { o.Lenient = true }).ServeConverse(ctx, changed)
	assert.NoError(t, err, "lenient replay")

	_, err = Replay(replayFixture()).ServeConverse(ctx, changed)
	wantReplayError(t, err, 400, "ValidationException", "recording: replay: request 1 differs from the recording:\n"+
		`  modelId: want "m1", got "m2"`+"\n"+
		`  messages[2].content[0].toolResult.content[0].text: want "2025-01-01T10:00:00Z", got "2025-06-30T17:42:09Z"`)

	// IgnoreToolResults leaves the time out.
	_, err = Replay(replayFixture(), ignoreClock).ServeConverse(ctx, changed)
	wantReplayError(t, err, 400, "ValidationException", "recording: replay: request 1 differs from the recording:\n"+
		`  modelId: want "m1", got "m2"`)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.NotContains(t, e.Message, "toolResult", "the ignored tool result is in the diff")

	changed.ModelId = aws.String("m1")
	_, err = Replay(replayFixture(), ignoreClock).ServeConverse(ctx, changed)
	assert.NoError(t, err, "IgnoreToolResults")
}

func TestReplayExchangeUsedUpByError(t *testing.T) {
	ctx := context.Background()
	h := Replay(replayFixture())
	bad := replayRequests()[0]
	bad.Body = []byte(`{"messages":[]}`)
	_, err := h.ServeConverse(ctx, bad)
	require.Error(t, err, "a differing request was served")
	_, err = h.ServeConverse(ctx, replayRequests()[1])
	assert.NoError(t, err, "the next request did not get the next exchange")
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
			require.Empty(t, tb.errs, "failed before the test ended")
			for _, fn := range tb.cleanups {
				fn()
			}
			var got string
			if len(tb.errs) > 0 {
				got = strings.Join(tb.errs, "\n")
			}
			assert.Equal(t, want, got, "at the end")
		})
	}
}

func ignoreClock(o *recording.ReplayOptions) {
	o.IgnoreToolResults = []string{"get_current_datetime"}
}

// TestReplayStreamEndings: a stream recorded ending in an error message is
// served ending in an exception that the SDK reports as the same error. A
// stream recorded with a decodeError, which the server cannot send, is
// refused as a call the recording cannot answer.
func TestReplayStreamEndings(t *testing.T) {
	start := recording.Event{Type: "messageStart", Payload: json.RawMessage(`{"role":"assistant"}`)}
	for _, tc := range []struct {
		name string
		x    recording.Exchange
		want func(t *testing.T, err error)
	}{
		{
			name: "error message",
			x: recording.Exchange{Events: []recording.Event{start,
				{Type: "InternalFailure", Payload: json.RawMessage(`{"message":"boom"}`), MessageType: "error"}}},
			want: func(t *testing.T, err error) {
				var api *smithy.GenericAPIError
				require.ErrorAs(t, err, &api)
				assert.Equal(t, "InternalFailure", api.Code)
				assert.Equal(t, "boom", api.Message)
			},
		},
		{
			name: "decodeError",
			x:    recording.Exchange{Events: []recording.Event{start}, DecodeError: "message checksum mismatch"},
			want: func(t *testing.T, err error) {
				var ve *types.ValidationException
				require.ErrorAs(t, err, &ve)
				assert.Contains(t, ve.ErrorMessage(), `recording: replay: the recorded stream broke (decodeError "message checksum mismatch")`)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := tc.x
			x.Operation, x.ModelID, x.Request, x.Status = recording.OpConverseStream, "m", json.RawMessage(`{"messages":[{"role":"user","content":[{"text":"Hi"}]}]}`), 200
			srv := NewServer(ReplayT(t, &recording.Recording{Version: recording.Version, Exchanges: []recording.Exchange{x}}))
			defer srv.Close()
			client := srv.Client(func(o *bedrockruntime.Options) { o.RetryMaxAttempts = 1 })
			out, err := client.ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{
				ModelId:  aws.String("m"),
				Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hi"}}}},
			})
			if err == nil {
				s := out.GetStream()
				for range s.Events() {
				}
				s.Close()
				err = s.Err()
			}
			tc.want(t, err)
		})
	}
}
