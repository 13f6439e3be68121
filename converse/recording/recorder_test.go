package recording_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/aws/smithy-go/eventstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.NoError(t, eventstream.NewEncoder().Encode(&buf, eventstream.Message{Headers: headers, Payload: []byte(payload)}))
	return buf.Bytes()
}

// newSignedRequest builds a request as the SDK's signer leaves it.
func newSignedRequest(t *testing.T, base, modelID, op, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/model/"+url.PathEscape(modelID)+"/"+op, strings.NewReader(body))
	require.NoError(t, err)
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
	require.NoError(t, err)
	return resp
}

func checkExchanges(t *testing.T, got *recording.Recording, want ...recording.Exchange) {
	t.Helper()
	assert.Equal(t, recording.Version, got.Version, "version")
	require.Len(t, got.Exchanges, len(want), "exchanges recorded: %+v", got.Exchanges)
	for i := range want {
		g, w := got.Exchanges[i], want[i]
		assert.Equal(t, w, g, "exchange %d:\ngot  %s\nwant %s", i+1, showExchange(g), showExchange(w))
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
		assert.Equal(t, recorderRequestBody, string(body), "the server got the body as sent")
		assert.Equal(t, recorderSecrets["Authorization"], r.Header.Get("Authorization"), "the recorder dropped the signature on the way")
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
	require.NoError(t, err)
	assert.Equal(t, recorderConverseOut, string(body), "the caller got the server's body")
	assert.Equal(t, recorderRequestID, resp.Header.Get("X-Amzn-Requestid"), "response headers did not reach the caller")
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
		assert.Equal(t, errBody, string(body), "%s: the caller got the server's answer", op)
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "%s: the caller got the server's answer", op)
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
	require.NoError(t, err, "reading a frame through the recorder")
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
	got := readFrame(t, resp.Body)
	assert.Equal(t, "messageStart", got.Headers.Get(":event-type").String(), "first frame %v", got.Headers)
	assert.Empty(t, rec.Recording().Exchanges, "exchanges recorded while the stream is open")
	for range frames[1:] {
		next <- struct{}{}
		readFrame(t, resp.Body)
	}
	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "after the last frame")
	require.Empty(t, rest, "after the last frame")

	checkExchanges(t, rec.Recording(), recording.Exchange{
		Operation: recording.OpConverseStream,
		ModelID:   recorderModel,
		Request:   []byte(recorderRequestBody),
		Status:    200,
		Events: []recording.Event{
			{Type: "messageStart", Payload: []byte(`{"p":"abcd","role":"assistant"}`)},
			{Type: "contentBlockDelta", Payload: []byte(`{"contentBlockIndex":0,"delta":{"text":"Hel"},"p":"ab"}`)},
			{Type: "contentBlockDelta", Payload: []byte(`{"contentBlockIndex":0,"delta":{"text":"lo"},"p":"abc"}`)},
			{Type: "modelStreamErrorException", Payload: []byte(`{"message":"stream broke","originalStatusCode":500}`), MessageType: "exception"},
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

	got := rec.Recording().Exchanges
	require.Len(t, got, 1, "one exchange")
	assert.Len(t, got[0].Events, 1, "with the one event read")
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
	require.Len(t, got, 2, "the stream, then the Converse call")
	assert.Equal(t, recording.OpConverseStream, got[0].Operation)
	assert.Equal(t, recording.OpConverse, got[1].Operation)
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
		assert.Equal(t, "echo", string(body), path)
	}
	assert.Empty(t, rec.Recording().Exchanges, "exchanges recorded")
}

type failingClient struct{ err error }

func (c failingClient) Do(*http.Request) (*http.Response, error) { return nil, c.err }

func TestRecorderTransportError(t *testing.T) {
	boom := errors.New("connection refused")
	rec := recording.NewRecorder(failingClient{boom})
	_, err := rec.Do(newSignedRequest(t, "http://127.0.0.1:1", recorderModel, "converse", recorderRequestBody))
	assert.ErrorIs(t, err, boom, "the client's error")
	assert.Empty(t, rec.Recording().Exchanges, "exchanges recorded")
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
	require.Len(t, rec.Recording().Exchanges, 3, "exchanges recorded")
	forbidden := []string{"Signature", "AKID", "Credential", "Authorization", "X-Amz", "20250101T000000Z", recorderRequestID}
	for _, v := range recorderSecrets {
		forbidden = append(forbidden, v)
	}
	for _, s := range forbidden {
		assert.NotContains(t, strings.ToLower(string(saved)), strings.ToLower(s), "the saved recording holds %q", s)
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
	again := rec.Recording().Exchanges[0]
	assert.Equal(t, recorderModel, again.ModelID, "changing a returned Recording changed the Recorder's")
	assert.Equal(t, recorderConverseOut, string(again.Response), "changing a returned Recording changed the Recorder's")
}
