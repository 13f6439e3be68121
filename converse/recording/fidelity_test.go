package recording_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/eventstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
)

// These tests make a call against a Bedrock on loopback through a
// Recorder. They make the same call against a Replayer of what was
// recorded, saved and loaded again. They check that the client sees the
// same outcome.

// upstreamAnswer is what the loopback Bedrock answers every call with.
type upstreamAnswer struct {
	status      int
	contentType string
	errorType   string // X-Amzn-ErrorType, if not empty
	body        []byte
}

// recordThenReplay makes call against a Recorder of a server answering
// with a, then against a Replayer of the recording, and returns the
// recording and both errors.
func recordThenReplay(t *testing.T, a upstreamAnswer, call func(*bedrockruntime.Client) error) (rec *recording.Recording, live, replayed error) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", a.contentType)
		if a.errorType != "" {
			w.Header().Set("X-Amzn-ErrorType", a.errorType)
		}
		w.WriteHeader(a.status)
		_, _ = w.Write(a.body)
	}))
	defer srv.Close()
	r := recording.NewRecorder(srv.Client())
	once := func(o *bedrockruntime.Options) { o.RetryMaxAttempts = 1 }
	live = call(recording.NewReplayer(nil).Client(once, func(o *bedrockruntime.Options) {
		o.BaseEndpoint = aws.String(srv.URL)
		o.HTTPClient = r
	}))
	return r.Recording(), live, replay(t, r.Recording(), call)
}

// replay makes call against a Replayer of rec once saved and loaded.
func replay(t *testing.T, rec *recording.Recording, call func(*bedrockruntime.Client) error) error {
	t.Helper()
	var buf bytes.Buffer
	_, err := rec.WriteTo(&buf)
	require.NoError(t, err, "save the recording")
	loaded, err := recording.Read(&buf)
	require.NoError(t, err, "load the recording")
	p := recording.NewReplayer(loaded)
	err = call(p.Client(func(o *bedrockruntime.Options) { o.RetryMaxAttempts = 1 }))
	assert.NoError(t, p.Unused())
	return err
}

func fidelityMessages(text string) []types.Message {
	return []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: text}}}}
}

func converseCall(c *bedrockruntime.Client) error {
	_, err := c.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String(e2eModel), Messages: fidelityMessages("Hi")})
	return err
}

// streamCall reads a whole stream and returns the error it ended with.
func streamCall(c *bedrockruntime.Client) error {
	out, err := c.ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{ModelId: aws.String(e2eModel), Messages: fidelityMessages("Hi")})
	if err != nil {
		return err
	}
	s := out.GetStream()
	for range s.Events() {
	}
	s.Close()
	return s.Err()
}

// frame encodes an event-stream message with the headers kv (name, value,
// ...).
func frame(t *testing.T, payload string, kv ...string) []byte {
	t.Helper()
	var m eventstream.Message
	for i := 0; i+1 < len(kv); i += 2 {
		m.Headers.Set(kv[i], eventstream.StringValue(kv[i+1]))
	}
	m.Payload = []byte(payload)
	var b bytes.Buffer
	require.NoError(t, eventstream.NewEncoder().Encode(&b, m))
	return b.Bytes()
}

// stream is a ConverseStream answer of the frames: a messageStart, then
// those given.
func stream(t *testing.T, frames ...[]byte) upstreamAnswer {
	body := frame(t, `{"role":"assistant"}`, ":event-type", "messageStart", ":content-type", "application/json", ":message-type", "event")
	return upstreamAnswer{status: http.StatusOK, contentType: "application/vnd.amazon.eventstream", body: bytes.Join(append([][]byte{body}, frames...), nil)}
}

func exceptionFrame(t *testing.T, typ, payload string) []byte {
	return frame(t, payload, ":exception-type", typ, ":content-type", "application/json", ":message-type", "exception")
}

// TestReplayFailsAsLive: a call that failed live fails in its replay with
// the same error, every field of it.
func TestReplayFailsAsLive(t *testing.T) {
	badCRC := frame(t, `{"contentBlockIndex":0,"delta":{"text":"lo"}}`, ":event-type", "contentBlockDelta", ":content-type", "application/json", ":message-type", "event")
	badCRC[len(badCRC)-1] ^= 0xff
	tests := []struct {
		name   string
		answer upstreamAnswer
		call   func(*bedrockruntime.Client) error
		check  func(t *testing.T, err error) // of the live error and the replayed alike
		// sameText is false where the replay fails alike but in other
		// words (a stream that is not an event stream at all).
		sameText bool
	}{
		{
			name:     "error message in a stream",
			answer:   stream(t, frame(t, "", ":message-type", "error", ":error-code", "InternalFailure", ":error-message", "boom")),
			call:     streamCall,
			sameText: true,
			check: func(t *testing.T, err error) {
				var api *smithy.GenericAPIError
				require.ErrorAs(t, err, &api)
				assert.Equal(t, "InternalFailure", api.Code)
				assert.Equal(t, "boom", api.Message)
			},
		},
		{
			name:     "error message without a message",
			answer:   stream(t, frame(t, "", ":message-type", "error", ":error-code", "InternalFailure")),
			call:     streamCall,
			sameText: true,
			check: func(t *testing.T, err error) {
				var api *smithy.GenericAPIError
				require.ErrorAs(t, err, &api)
				assert.Equal(t, "InternalFailure", api.Code)
			},
		},
		{
			name:     "exception with all its members",
			answer:   stream(t, exceptionFrame(t, "modelStreamErrorException", `{"message":"model failed","originalStatusCode":400,"originalMessage":"bad input to model"}`)),
			call:     streamCall,
			sameText: true,
			check: func(t *testing.T, err error) {
				var e *types.ModelStreamErrorException
				require.ErrorAs(t, err, &e)
				assert.Equal(t, int32(400), aws.ToInt32(e.OriginalStatusCode))
				assert.Equal(t, "bad input to model", aws.ToString(e.OriginalMessage))
			},
		},
		{
			name:     "exception of a type the SDK does not know",
			answer:   stream(t, exceptionFrame(t, "capacityFault", `{"message":"no capacity"}`)),
			call:     streamCall,
			sameText: true,
			check: func(t *testing.T, err error) {
				var api *smithy.GenericAPIError
				require.ErrorAs(t, err, &api)
				assert.Equal(t, "capacityFault", api.Code)
			},
		},
		{
			name:     "checksum mismatch",
			answer:   stream(t, badCRC),
			call:     streamCall,
			sameText: true,
			check: func(t *testing.T, err error) {
				assert.ErrorContains(t, err, "message checksum mismatch")
			},
		},
		{
			name:   "not an event stream",
			answer: upstreamAnswer{status: http.StatusOK, contentType: "application/vnd.amazon.eventstream", body: []byte("<html>Service Unavailable, and a long page about it</html>")},
			call:   streamCall,
			check: func(t *testing.T, err error) {
				assert.ErrorContains(t, err, "decode event")
			},
		},
		{
			name: "error body with every member",
			answer: upstreamAnswer{status: http.StatusFailedDependency, contentType: "application/json",
				errorType: "ModelErrorException:http://internal.amazon.com/coral/com.amazon.bedrock/",
				body:      []byte(`{"message":"model error","originalStatusCode":500,"resourceName":"arn:aws:sagemaker:us-east-1:123456789012:endpoint/x"}`)},
			call:     converseCall,
			sameText: true,
			check: func(t *testing.T, err error) {
				var e *types.ModelErrorException
				require.ErrorAs(t, err, &e)
				assert.Equal(t, int32(500), aws.ToInt32(e.OriginalStatusCode))
				assert.Equal(t, "arn:aws:sagemaker:us-east-1:123456789012:endpoint/x", aws.ToString(e.ResourceName))
			},
		},
		{
			name:     "error body that is not JSON",
			answer:   upstreamAnswer{status: http.StatusServiceUnavailable, contentType: "text/html", body: []byte("<html>Service Unavailable</html>")},
			call:     converseCall,
			sameText: true,
			check: func(t *testing.T, err error) {
				var e *smithy.DeserializationError
				require.ErrorAs(t, err, &e)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, live, replayed := recordThenReplay(t, tt.answer, tt.call)
			require.Error(t, live, "live")
			require.Error(t, replayed, "replayed (live: %v)", live)
			t.Run("live", func(t *testing.T) { tt.check(t, live) })
			t.Run("replayed", func(t *testing.T) { tt.check(t, replayed) })
			if tt.sameText {
				assert.Equal(t, live.Error(), replayed.Error())
			}
		})
	}
}

// TestRecorderMarksUndecodableStream: a stream whose bytes stop being an
// event stream is recorded with its events and a decodeError, even with
// no event before. A stream that ends in an error message records it as
// one.
func TestRecorderMarksUndecodableStream(t *testing.T) {
	rec, _, _ := recordThenReplay(t, upstreamAnswer{status: http.StatusOK, contentType: "application/vnd.amazon.eventstream", body: []byte("<html></html>")}, streamCall)
	require.Len(t, rec.Exchanges, 1)
	assert.Empty(t, rec.Exchanges[0].Events)
	assert.Contains(t, rec.Exchanges[0].DecodeError, "not an event-stream message")

	rec, _, _ = recordThenReplay(t, stream(t, frame(t, "", ":message-type", "error", ":error-code", "InternalFailure", ":error-message", "boom")), streamCall)
	require.Len(t, rec.Exchanges, 1)
	require.Len(t, rec.Exchanges[0].Events, 2)
	assert.Equal(t, recording.Event{Type: "InternalFailure", Payload: []byte(`{"message":"boom"}`), MessageType: "error"}, rec.Exchanges[0].Events[1])
}

// TestReplayOfRedactedPrompt: a prompt holding text that Redact changes is
// recorded redacted, and the strict replay of the same conversation, by a
// Replayer or by bedrocktest.Replay, still matches it.
func TestReplayOfRedactedPrompt(t *testing.T) {
	const prompt = "Explain the header\nAuthorization: Bearer ABSKQmVkcm9ja0FQSUtleS1leGFtcGxl\nin HTTP."
	call := func(c *bedrockruntime.Client) error {
		_, err := c.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String(e2eModel), Messages: fidelityMessages(prompt)})
		return err
	}
	live := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("It carries credentials.")))
	defer live.Close()
	r := recording.NewRecorder(live.HTTPClient())
	require.NoError(t, call(live.Client(func(o *bedrockruntime.Options) { o.HTTPClient = r })))
	rec := r.Recording()
	require.Len(t, rec.Exchanges, 1)
	assert.Contains(t, string(rec.Exchanges[0].Request), `Authorization: [REDACTED]\nin HTTP.`, "the recorded prompt")
	assert.NotContains(t, string(rec.Exchanges[0].Request), "ABSK", "the recorded prompt")

	t.Run("Replayer", func(t *testing.T) {
		assert.NoError(t, replay(t, rec, call))
	})
	t.Run("bedrocktest.Replay", func(t *testing.T) {
		srv := bedrocktest.NewServer(bedrocktest.ReplayT(t, rec))
		defer srv.Close()
		assert.NoError(t, call(srv.Client()))
	})
	t.Run("a different prompt still differs", func(t *testing.T) {
		err := replay(t, rec, func(c *bedrockruntime.Client) error {
			_, err := c.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String(e2eModel), Messages: fidelityMessages(strings.Replace(prompt, "HTTP", "SMTP", 1))})
			return err
		})
		var ve *types.ValidationException
		require.True(t, errors.As(err, &ve), "%v", err)
		assert.Contains(t, ve.ErrorMessage(), `want "Explain the header\nAuthorization: [REDACTED]\nin HTTP.", got "Explain the header\nAuthorization: [REDACTED]\nin SMTP."`)
	})
}
