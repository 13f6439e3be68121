package recording_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go/eventstream"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
)

// Secrets a signed request carries; none may reach a recording.
var recorderSecrets = map[string]string{
	"Authorization":        "AWS4-HMAC-SHA256 Credential=AKIDRECORDERTEST/20250101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
	"X-Amz-Security-Token": "FwoGZXIvYXdzEXAMPLESESSIONTOKEN",
	"X-Amz-Date":           "20250101T000000Z",
}

const (
	recorderModel       = "anthropic.claude-3-5-haiku-20241022-v1:0"
	recorderModelARN    = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0"
	recorderRequestBody = `{"messages":[{"role":"user","content":[{"text":"Hi"}]}]}`
	recorderConverseOut = `{"output":{"message":{"role":"assistant","content":[{"text":"Hello"}]}},"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`
	recorderRequestID   = "8a2f1c3e-request-id-from-the-server"
)

// eventFrame encodes one event-stream message the way Bedrock sends it.
func eventFrame(t *testing.T, messageType, typ, payload string) []byte {
	t.Helper()
	var headers eventstream.Headers
	headers.Set(eventstream.MessageTypeHeader, eventstream.StringValue(messageType))
	switch messageType {
	case eventstream.ExceptionMessageType:
		headers.Set(eventstream.ExceptionTypeHeader, eventstream.StringValue(typ))
	default:
		headers.Set(eventstream.EventTypeHeader, eventstream.StringValue(typ))
	}
	headers.Set(eventstream.ContentTypeHeader, eventstream.StringValue("application/json"))
	var buf bytes.Buffer
	if err := eventstream.NewEncoder().Encode(&buf, eventstream.Message{Headers: headers, Payload: []byte(payload)}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// newSignedRequest builds a request as the SDK's signer leaves it.
func newSignedRequest(t *testing.T, base, modelID, op, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/model/"+url.PathEscape(modelID)+"/"+op, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range recorderSecrets {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

func mustDo(t *testing.T, c interface {
	Do(*http.Request) (*http.Response, error)
}, req *http.Request) *http.Response {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func checkExchanges(t *testing.T, got *recording.Recording, want ...recording.Exchange) {
	t.Helper()
	if got.Version != recording.Version {
		t.Errorf("version %d, want %d", got.Version, recording.Version)
	}
	if len(got.Exchanges) != len(want) {
		t.Fatalf("%d exchanges recorded, want %d: %+v", len(got.Exchanges), len(want), got.Exchanges)
	}
	for i := range want {
		if g, w := got.Exchanges[i], want[i]; !reflect.DeepEqual(g, w) {
			t.Errorf("exchange %d:\ngot  %s\nwant %s", i+1, showExchange(g), showExchange(w))
		}
	}
}

func showExchange(x recording.Exchange) string {
	var b strings.Builder
	b.WriteString(x.Operation + " " + x.ModelID + " req=" + string(x.Request) + " status=" + http.StatusText(x.Status) + " errorType=" + x.ErrorType + " resp=" + string(x.Response))
	for _, ev := range x.Events {
		b.WriteString(" " + ev.Type + ":" + string(ev.Payload))
	}
	return b.String()
}

func TestRecorderConverse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if string(body) != recorderRequestBody {
			t.Errorf("server got body %q, want it as sent", body)
		}
		if r.Header.Get("Authorization") != recorderSecrets["Authorization"] {
			t.Error("the recorder dropped the signature on the way")
		}
		w.Header().Set("X-Amzn-Requestid", recorderRequestID)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, recorderConverseOut)
	}))
	defer srv.Close()

	rec := recording.NewRecorder(srv.Client())
	req := newSignedRequest(t, srv.URL, recorderModelARN, "converse", recorderRequestBody)
	resp := mustDo(t, rec, req)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != recorderConverseOut {
		t.Errorf("caller got %q, want the server's body", body)
	}
	if resp.Header.Get("X-Amzn-Requestid") != recorderRequestID {
		t.Error("response headers did not reach the caller")
	}
	checkExchanges(t, rec.Recording(), recording.Exchange{
		Operation: recording.OpConverse,
		ModelID:   recorderModelARN,
		Request:   []byte(recorderRequestBody),
		Status:    200,
		Response:  []byte(recorderConverseOut),
	})
}

func TestRecorderErrorResponse(t *testing.T) {
	const errBody = `{"message":"Too many requests, please wait before trying again."}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Amzn-ErrorType", "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/")
		w.Header().Set("X-Amzn-Requestid", recorderRequestID)
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, errBody)
	}))
	defer srv.Close()

	rec := recording.NewRecorder(srv.Client())
	for _, op := range []string{"converse", "converse-stream"} {
		resp := mustDo(t, rec, newSignedRequest(t, srv.URL, recorderModel, op, recorderRequestBody))
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != errBody || resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("%s: caller got %d %q, want the server's answer", op, resp.StatusCode, body)
		}
	}
	want := recording.Exchange{
		Operation: recording.OpConverse,
		ModelID:   recorderModel,
		Request:   []byte(recorderRequestBody),
		Status:    429,
		ErrorType: "ThrottlingException",
		Response:  []byte(errBody),
	}
	wantStream := want
	wantStream.Operation = recording.OpConverseStream
	checkExchanges(t, rec.Recording(), want, wantStream)
}

// streamServer serves a ConverseStream body one frame at a time: frame i+1
// is written only when the test sends on next, so a test can look at the
// recorder between frames. It returns once every frame is written or
// release is closed.
func streamServer(t *testing.T, frames [][]byte, next <-chan struct{}, release <-chan struct{}) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		w.Header().Set("X-Amzn-Requestid", recorderRequestID)
		w.WriteHeader(http.StatusOK)
		for i, f := range frames {
			if i > 0 {
				select {
				case <-next:
				case <-release:
					return
				}
			}
			w.Write(f)
			w.(http.Flusher).Flush()
		}
	}))
}

// openStream makes a ConverseStream call through a new Recorder to a
// streamServer serving frames, and returns the Recorder, the response and
// the channel that lets the server send the next frame.
func openStream(t *testing.T, frames [][]byte) (*recording.Recorder, *http.Response, chan<- struct{}) {
	next, release := make(chan struct{}), make(chan struct{})
	srv := streamServer(t, frames, next, release)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: lets the handler return
	rec := recording.NewRecorder(srv.Client())
	resp := mustDo(t, rec, newSignedRequest(t, srv.URL, recorderModel, "converse-stream", recorderRequestBody))
	return rec, resp, next
}

func readFrame(t *testing.T, r io.Reader) eventstream.Message {
	t.Helper()
	msg, err := eventstream.NewDecoder().Decode(r, nil)
	if err != nil {
		t.Fatalf("reading a frame through the recorder: %v", err)
	}
	return msg
}

func TestRecorderStream(t *testing.T) {
	frames := [][]byte{
		eventFrame(t, "event", "messageStart", `{"p":"abcd","role":"assistant"}`),
		eventFrame(t, "event", "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hel"},"p":"ab"}`),
		eventFrame(t, "event", "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"lo"},"p":"abc"}`),
		eventFrame(t, "exception", "modelStreamErrorException", `{"message":"stream broke","originalStatusCode":500}`),
	}
	rec, resp, next := openStream(t, frames)
	defer resp.Body.Close()

	// The first event arrives while the server still holds the second.
	if got := readFrame(t, resp.Body); got.Headers.Get(":event-type").String() != "messageStart" {
		t.Errorf("first frame %v, want messageStart", got.Headers)
	}
	if n := len(rec.Recording().Exchanges); n != 0 {
		t.Errorf("%d exchanges recorded while the stream is open, want 0", n)
	}
	for range frames[1:] {
		next <- struct{}{}
		readFrame(t, resp.Body)
	}
	if rest, err := io.ReadAll(resp.Body); err != nil || len(rest) != 0 {
		t.Fatalf("after the last frame: %q, %v", rest, err)
	}

	checkExchanges(t, rec.Recording(), recording.Exchange{
		Operation: recording.OpConverseStream,
		ModelID:   recorderModel,
		Request:   []byte(recorderRequestBody),
		Status:    200,
		Events: []recording.Event{
			{Type: "messageStart", Payload: []byte(`{"p":"abcd","role":"assistant"}`)},
			{Type: "contentBlockDelta", Payload: []byte(`{"contentBlockIndex":0,"delta":{"text":"Hel"},"p":"ab"}`)},
			{Type: "contentBlockDelta", Payload: []byte(`{"contentBlockIndex":0,"delta":{"text":"lo"},"p":"abc"}`)},
			{Type: "modelStreamErrorException", Payload: []byte(`{"message":"stream broke","originalStatusCode":500}`)},
		},
	})
}

func TestRecorderStreamClosedEarly(t *testing.T) {
	frames := [][]byte{
		eventFrame(t, "event", "messageStart", `{"role":"assistant"}`),
		eventFrame(t, "event", "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"never read"}}`),
	}
	rec, resp, next := openStream(t, frames)
	readFrame(t, resp.Body)
	resp.Body.Close()
	next <- struct{}{} // the server goes on, but the stream is closed
	resp.Body.Close()  // and a second Close records nothing more

	checkExchanges(t, rec.Recording(), recording.Exchange{
		Operation: recording.OpConverseStream,
		ModelID:   recorderModel,
		Request:   []byte(recorderRequestBody),
		Status:    200,
		Events:    []recording.Event{{Type: "messageStart", Payload: []byte(`{"role":"assistant"}`)}},
	})
}

// The SDK reads a stream in one goroutine and may close it from another.
func TestRecorderStreamCloseWhileReading(t *testing.T) {
	frames := [][]byte{
		eventFrame(t, "event", "messageStart", `{"role":"assistant"}`),
		eventFrame(t, "event", "messageStop", `{"stopReason":"end_turn"}`),
	}
	rec, resp, _ := openStream(t, frames)
	readFrame(t, resp.Body)
	var wg sync.WaitGroup
	wg.Go(func() {
		io.Copy(io.Discard, resp.Body) // blocks until the Close below
	})
	resp.Body.Close()
	wg.Wait()

	if got := rec.Recording().Exchanges; len(got) != 1 || len(got[0].Events) != 1 {
		t.Errorf("recorded %+v, want one exchange with the one event read", got)
	}
}

// Exchanges are in request order, even when a stream ends after a later
// call.
func TestRecorderKeepsRequestOrder(t *testing.T) {
	frames := [][]byte{eventFrame(t, "event", "messageStart", `{"role":"assistant"}`)}
	streamSrv := streamServer(t, frames, nil, nil)
	defer streamSrv.Close()
	converseSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, recorderConverseOut)
	}))
	defer converseSrv.Close()

	rec := recording.NewRecorder(nil)
	stream := mustDo(t, rec, newSignedRequest(t, streamSrv.URL, recorderModel, "converse-stream", recorderRequestBody))
	resp := mustDo(t, rec, newSignedRequest(t, converseSrv.URL, recorderModel, "converse", `{"messages":[]}`))
	resp.Body.Close()
	io.Copy(io.Discard, stream.Body)
	stream.Body.Close()

	got := rec.Recording().Exchanges
	if len(got) != 2 || got[0].Operation != recording.OpConverseStream || got[1].Operation != recording.OpConverse {
		t.Errorf("recorded %+v, want the stream, then the Converse call", got)
	}
}

func TestRecorderPassesOtherCallsThrough(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	}))
	defer srv.Close()

	rec := recording.NewRecorder(srv.Client())
	for _, path := range []string{"/model/m/invoke", "/model/m/converse/extra", "/converse", "/model//converse"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader("echo"))
		resp := mustDo(t, rec, req)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "echo" {
			t.Errorf("%s: got %q back", path, body)
		}
	}
	if n := len(rec.Recording().Exchanges); n != 0 {
		t.Errorf("%d exchanges recorded, want 0", n)
	}
}

type failingClient struct{ err error }

func (c failingClient) Do(*http.Request) (*http.Response, error) { return nil, c.err }

func TestRecorderTransportError(t *testing.T) {
	boom := errors.New("connection refused")
	rec := recording.NewRecorder(failingClient{boom})
	_, err := rec.Do(newSignedRequest(t, "http://127.0.0.1:1", recorderModel, "converse", recorderRequestBody))
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want the client's", err)
	}
	if n := len(rec.Recording().Exchanges); n != 0 {
		t.Errorf("%d exchanges recorded, want 0", n)
	}
}

// A recording holds no header: no credentials, token, signature, date or
// request ID, for any kind of exchange.
func TestRecorderRecordsNoHeaders(t *testing.T) {
	frames := [][]byte{
		eventFrame(t, "event", "messageStart", `{"role":"assistant"}`),
		eventFrame(t, "event", "messageStop", `{"stopReason":"end_turn"}`),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("X-Amzn-Requestid", recorderRequestID)
		switch {
		case strings.HasSuffix(r.URL.Path, "/converse-stream"):
			w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
			for _, f := range frames {
				w.Write(f)
			}
		case r.Header.Get("X-Fail") != "":
			w.Header().Set("X-Amzn-ErrorType", "ValidationException")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"message":"bad"}`)
		default:
			io.WriteString(w, recorderConverseOut)
		}
	}))
	defer srv.Close()

	rec := recording.NewRecorder(srv.Client())
	for _, op := range []string{"converse", "converse-stream", "converse"} {
		req := newSignedRequest(t, srv.URL, recorderModel, op, recorderRequestBody)
		if op == "converse" && len(rec.Recording().Exchanges) > 0 {
			req.Header.Set("X-Fail", "1")
		}
		resp := mustDo(t, rec, req)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	saved := savedBytes(t, rec)
	if n := len(rec.Recording().Exchanges); n != 3 {
		t.Fatalf("%d exchanges recorded, want 3", n)
	}
	forbidden := []string{"Signature", "AKID", "Credential", "Authorization", "X-Amz", "20250101T000000Z", recorderRequestID}
	for _, v := range recorderSecrets {
		forbidden = append(forbidden, v)
	}
	for _, s := range forbidden {
		if bytes.Contains(bytes.ToLower(saved), bytes.ToLower([]byte(s))) {
			t.Errorf("the saved recording holds %q:\n%s", s, saved)
		}
	}
}

func TestRecorderRecordingIsACopy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, recorderConverseOut)
	}))
	defer srv.Close()

	rec := recording.NewRecorder(srv.Client())
	resp := mustDo(t, rec, newSignedRequest(t, srv.URL, recorderModel, "converse", recorderRequestBody))
	resp.Body.Close()

	first := rec.Recording()
	first.Exchanges[0].ModelID = "changed"
	first.Exchanges[0].Response[0] = '['
	if again := rec.Recording().Exchanges[0]; again.ModelID != recorderModel || string(again.Response) != recorderConverseOut {
		t.Errorf("changing a returned Recording changed the Recorder's: %s", showExchange(again))
	}
}

// The tests below record conversations that the real SDK client holds with
// a scripted Server, then replay them in a new Server and check that the
// client sees exactly the same thing.

const e2eModel = "anthropic.claude-3-5-haiku-20241022-v1:0"

// e2eOptions makes SDK retries immediate, so that a recorded throttling
// costs no time.
func e2eOptions(o *bedrockruntime.Options) {
	o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
		so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
	})
}

func e2eToolConfig() *types.ToolConfiguration {
	return &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
		Name:        aws.String("get_current_datetime"),
		Description: aws.String("Returns the current date and time."),
		InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(map[string]any{"type": "object"})},
	}}}}
}

func e2eScript() []*bedrocktest.Reply {
	return []*bedrocktest.Reply{
		bedrocktest.ToolUse("Let me look at the clock.", bedrocktest.Call{ID: "tooluse_clock1", Name: "get_current_datetime"}),
		bedrocktest.Text("It is ten o'clock <sharp> & sunny."),
	}
}

// turnFunc makes one model call with msgs and returns the assistant's
// message (nil if the call ended in an error) and what the client saw, one
// line per item.
type turnFunc func(t *testing.T, client *bedrockruntime.Client, msgs []types.Message) (*types.Message, []string)

func userMessage(text string) types.Message {
	return types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: text}}}
}

// holdConversation asks what time it is, answers a call of
// get_current_datetime with now and returns all that the client saw.
func holdConversation(t *testing.T, client *bedrockruntime.Client, now string, turn turnFunc) []string {
	t.Helper()
	msgs := []types.Message{userMessage("What time is it?")}
	var seen []string
	for range 2 {
		reply, lines := turn(t, client, msgs)
		seen = append(seen, lines...)
		if reply == nil {
			break
		}
		var callID string
		for _, b := range reply.Content {
			if b, ok := b.(*types.ContentBlockMemberToolUse); ok {
				callID = aws.ToString(b.Value.ToolUseId)
			}
		}
		if callID == "" {
			break
		}
		result := types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
			ToolUseId: aws.String(callID),
			Content:   []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: now}},
		}}}}
		msgs = append(msgs, *reply, result)
	}
	return seen
}

func converseTurn(t *testing.T, client *bedrockruntime.Client, msgs []types.Message) (*types.Message, []string) {
	t.Helper()
	out, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String(e2eModel), Messages: msgs, ToolConfig: e2eToolConfig()})
	if err != nil {
		t.Fatalf("turn %d: %v", len(msgs)/2+1, err)
	}
	msg := out.Output.(*types.ConverseOutputMemberMessage).Value
	seen := []string{fmt.Sprintf("stop=%s usage=%d/%d/%d", out.StopReason,
		aws.ToInt32(out.Usage.InputTokens), aws.ToInt32(out.Usage.OutputTokens), aws.ToInt32(out.Usage.TotalTokens))}
	for _, b := range msg.Content {
		switch b := b.(type) {
		case *types.ContentBlockMemberText:
			seen = append(seen, fmt.Sprintf("text %q", b.Value))
		case *types.ContentBlockMemberToolUse:
			input, err := b.Value.Input.MarshalSmithyDocument()
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, fmt.Sprintf("toolUse %s %s %s", aws.ToString(b.Value.ToolUseId), aws.ToString(b.Value.Name), input))
			b.Value.Type = "" // Bedrock refuses it in the history
		default:
			seen = append(seen, fmt.Sprintf("block %T", b))
		}
	}
	return &msg, seen
}

func streamTurn(t *testing.T, client *bedrockruntime.Client, msgs []types.Message) (*types.Message, []string) {
	t.Helper()
	out, err := client.ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{ModelId: aws.String(e2eModel), Messages: msgs, ToolConfig: e2eToolConfig()})
	if err != nil {
		t.Fatalf("turn %d: %v", len(msgs)/2+1, err)
	}
	stream := out.GetStream()
	defer stream.Close()
	// Rebuild the assistant message from the events, as a client does.
	msg := &types.Message{Role: types.ConversationRoleAssistant}
	var seen []string
	var text, input strings.Builder
	var use *types.ToolUseBlock
	for ev := range stream.Events() {
		switch ev := ev.(type) {
		case *types.ConverseStreamOutputMemberMessageStart:
			seen = append(seen, "messageStart "+string(ev.Value.Role))
		case *types.ConverseStreamOutputMemberContentBlockStart:
			if s, ok := ev.Value.Start.(*types.ContentBlockStartMemberToolUse); ok {
				seen = append(seen, fmt.Sprintf("start %d toolUse %s %s", aws.ToInt32(ev.Value.ContentBlockIndex), aws.ToString(s.Value.ToolUseId), aws.ToString(s.Value.Name)))
				use = &types.ToolUseBlock{ToolUseId: s.Value.ToolUseId, Name: s.Value.Name}
			}
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			switch d := ev.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				seen = append(seen, fmt.Sprintf("delta %d text %q", aws.ToInt32(ev.Value.ContentBlockIndex), d.Value))
				text.WriteString(d.Value)
			case *types.ContentBlockDeltaMemberToolUse:
				seen = append(seen, fmt.Sprintf("delta %d input %q", aws.ToInt32(ev.Value.ContentBlockIndex), aws.ToString(d.Value.Input)))
				input.WriteString(aws.ToString(d.Value.Input))
			}
		case *types.ConverseStreamOutputMemberContentBlockStop:
			seen = append(seen, fmt.Sprintf("stop %d", aws.ToInt32(ev.Value.ContentBlockIndex)))
			if use != nil {
				var v map[string]any
				if err := json.Unmarshal([]byte(input.String()), &v); err != nil {
					t.Fatalf("tool input %q: %v", input.String(), err)
				}
				use.Input = document.NewLazyDocument(v)
				msg.Content = append(msg.Content, &types.ContentBlockMemberToolUse{Value: *use})
				use = nil
				input.Reset()
			} else {
				msg.Content = append(msg.Content, &types.ContentBlockMemberText{Value: text.String()})
				text.Reset()
			}
		case *types.ConverseStreamOutputMemberMessageStop:
			seen = append(seen, "messageStop "+string(ev.Value.StopReason))
		case *types.ConverseStreamOutputMemberMetadata:
			seen = append(seen, fmt.Sprintf("metadata %d/%d/%d", aws.ToInt32(ev.Value.Usage.InputTokens),
				aws.ToInt32(ev.Value.Usage.OutputTokens), aws.ToInt32(ev.Value.Usage.TotalTokens)))
		}
	}
	if err := stream.Err(); err != nil {
		return nil, append(seen, fmt.Sprintf("error %T: %v", err, err))
	}
	return msg, seen
}

// recordAndReplay holds the conversation with a Server answering with h
// through a Recorder, saves and loads the recording, then holds it again,
// at another time, from a strict Replayer in process and from a Server
// replaying it (bedrocktest.Replay), which must see the same. It returns the
// recording and what the client saw when recording and replaying.
func recordAndReplay(t *testing.T, h bedrocktest.Handler, turn turnFunc) (rec *recording.Recording, recorded, replayed []string) {
	t.Helper()
	srv := bedrocktest.NewServer(h)
	defer srv.Close()
	recorder := recording.NewRecorder(srv.HTTPClient())
	recorded = holdConversation(t, srv.Client(e2eOptions, func(o *bedrockruntime.Options) { o.HTTPClient = recorder }), "2025-01-01T10:00:00Z", turn)

	rec, err := recording.Read(bytes.NewReader(savedBytes(t, recorder)))
	if err != nil {
		t.Fatal(err)
	}
	ignoreClock := func(o *recording.ReplayOptions) { o.IgnoreToolResults = []string{"get_current_datetime"} }

	replayer := recording.NewReplayer(rec, ignoreClock)
	replayed = holdConversation(t, replayer.Client(e2eOptions), "2025-06-30T17:42:09Z", turn)
	if err := replayer.Unused(); err != nil {
		t.Error(err)
	}

	replay := bedrocktest.NewServer(bedrocktest.ReplayT(t, rec, ignoreClock))
	defer replay.Close()
	served := holdConversation(t, replay.Client(e2eOptions), "2025-06-30T17:42:09Z", turn)
	if !slices.Equal(served, replayed) {
		t.Errorf("bedrocktest.Replay served:\n  %s\nthe Replayer:\n  %s", strings.Join(served, "\n  "), strings.Join(replayed, "\n  "))
	}
	return rec, recorded, replayed
}

func checkSameConversation(t *testing.T, recorded, replayed []string) {
	t.Helper()
	if !slices.Equal(recorded, replayed) {
		t.Errorf("the replay differs from the recorded conversation:\nrecorded:\n  %s\nreplayed:\n  %s",
			strings.Join(recorded, "\n  "), strings.Join(replayed, "\n  "))
	}
}

func exchangeSummary(rec *recording.Recording) []string {
	var out []string
	for _, x := range rec.Exchanges {
		s := fmt.Sprintf("%s %s %d", x.Operation, x.ModelID, x.Status)
		if x.ErrorType != "" {
			s += " " + x.ErrorType
		}
		if len(x.Events) > 0 {
			s += fmt.Sprintf(" %s…%s", x.Events[0].Type, x.Events[len(x.Events)-1].Type)
		}
		out = append(out, s)
	}
	return out
}

func TestRecordReplayConverse(t *testing.T) {
	// The first call is throttled: the SDK's retry is recorded and replayed.
	rec, recorded, replayed := recordAndReplay(t, bedrocktest.Throttle(1, bedrocktest.Script(e2eScript()...)), converseTurn)

	want := []string{
		"stop=tool_use usage=10/5/15",
		`text "Let me look at the clock."`,
		"toolUse tooluse_clock1 get_current_datetime {}",
		"stop=end_turn usage=10/5/15",
		`text "It is ten o'clock <sharp> & sunny."`,
	}
	if !slices.Equal(recorded, want) {
		t.Errorf("recorded conversation:\n  %s\nwant:\n  %s", strings.Join(recorded, "\n  "), strings.Join(want, "\n  "))
	}
	checkSameConversation(t, recorded, replayed)
	wantExchanges := []string{
		"Converse " + e2eModel + " 429 ThrottlingException",
		"Converse " + e2eModel + " 200",
		"Converse " + e2eModel + " 200",
	}
	if got := exchangeSummary(rec); !slices.Equal(got, wantExchanges) {
		t.Errorf("exchanges %q, want %q", got, wantExchanges)
	}
}

func TestRecordReplayConverseStream(t *testing.T) {
	script := e2eScript()
	last := script[len(script)-1]
	last.Chunk = 5
	last.Exception = &bedrocktest.Exception{Type: "modelStreamErrorException", Message: "the model stopped midway"}
	last.ExceptionAfter = 4
	rec, recorded, replayed := recordAndReplay(t, bedrocktest.Script(script...), streamTurn)

	if len(recorded) < 10 || !strings.HasPrefix(recorded[len(recorded)-1], "error *types.ModelStreamErrorException: ") {
		t.Errorf("recorded conversation does not end in the exception:\n  %s", strings.Join(recorded, "\n  "))
	}
	checkSameConversation(t, recorded, replayed)
	wantExchanges := []string{
		"ConverseStream " + e2eModel + " 200 messageStart…metadata",
		"ConverseStream " + e2eModel + " 200 messageStart…modelStreamErrorException",
	}
	if got := exchangeSummary(rec); !slices.Equal(got, wantExchanges) {
		t.Errorf("exchanges %q, want %q", got, wantExchanges)
	}
}

// A strict replay turns a conversation that went another way into a
// ValidationException saying where, and so does a call too many, both from
// the Replayer in process and from a bedrocktest Server.
func TestReplayThroughSDKClient(t *testing.T) {
	srv := bedrocktest.NewServer(bedrocktest.Script(e2eScript()...))
	defer srv.Close()
	recorder := recording.NewRecorder(srv.HTTPClient())
	holdConversation(t, srv.Client(func(o *bedrockruntime.Options) { o.HTTPClient = recorder }), "10:00", converseTurn)

	t.Run("Replayer", func(t *testing.T) {
		checkStrictReplay(t, recording.NewReplayer(recorder.Recording()).Client())
	})
	t.Run("bedrocktest.Replay", func(t *testing.T) {
		replay := bedrocktest.NewServer(bedrocktest.Replay(recorder.Recording()))
		defer replay.Close()
		checkStrictReplay(t, replay.Client())
	})
}

func checkStrictReplay(t *testing.T, client *bedrockruntime.Client) {
	ctx := context.Background()

	_, err := client.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(e2eModel), Messages: []types.Message{userMessage("What day is it?")}, ToolConfig: e2eToolConfig()})
	var invalid *types.ValidationException
	if !errors.As(err, &invalid) {
		t.Fatalf("error %v, want a *types.ValidationException", err)
	}
	want := "recording: replay: request 1 differs from the recording:\n" +
		`  messages[0].content[0].text: want "What time is it?", got "What day is it?"`
	if got := aws.ToString(invalid.Message); got != want {
		t.Errorf("message %q, want %q", got, want)
	}

	// Request 2 gets exchange 2, a Converse call: asking for a stream instead is refused.
	_, err = client.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: aws.String(e2eModel), Messages: []types.Message{userMessage("What time is it?")}})
	if !errors.As(err, &invalid) || !strings.Contains(aws.ToString(invalid.Message), "request 2 is ConverseStream but exchange 2 of the recording is Converse") {
		t.Errorf("error %v, want the operation mismatch", err)
	}

	_, err = client.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(e2eModel), Messages: []types.Message{userMessage("What time is it?")}})
	if !errors.As(err, &invalid) || aws.ToString(invalid.Message) != "recording: replay: request 3 but the recording has 2 exchanges" {
		t.Errorf("error %v, want the exhausted recording", err)
	}
}

// Record a call to a scripted Server, then serve the same call from the
// recording, in process: in a real program, the recording is made once
// against Bedrock and kept in testdata/.
func ExampleNewReplayer() {
	ctx := context.Background()
	input := &bedrockruntime.ConverseInput{
		ModelId:  aws.String("anthropic.claude-3-5-haiku-20241022-v1:0"),
		Messages: []types.Message{userMessage("Say hello.")},
	}

	live := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("Hello!")))
	recorder := recording.NewRecorder(live.HTTPClient())
	client := live.Client(func(o *bedrockruntime.Options) { o.HTTPClient = recorder })
	if _, err := client.Converse(ctx, input); err != nil {
		fmt.Println(err)
	}
	live.Close()

	replayer := recording.NewReplayer(recorder.Recording())
	out, err := replayer.Client().Converse(ctx, input) // no AWS configuration needed
	if err != nil {
		fmt.Println(err)
		return
	}
	msg := out.Output.(*types.ConverseOutputMemberMessage).Value
	fmt.Println(msg.Content[0].(*types.ContentBlockMemberText).Value)
	fmt.Println(replayer.Unused())
	// Output:
	// Hello!
	// <nil>
}
