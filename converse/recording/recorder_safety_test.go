package recording_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
)

const (
	leakedToken = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQDx5Yz+abc/def=="
	leakedKeyID = "ASIAQWERTYUIOPASDFGH"
)

// An AWS error that echoes the signed request, a model answer quoting a key
// and a stream exception carrying a token: none of them reaches the file.
// The file is private (0600), even when it existed before.
func TestRecorderRedactsAndSavesPrivately(t *testing.T) {
	invalidSig, _ := json.Marshal(map[string]string{"message": "The request signature we calculated does not match the signature you provided.\n\n" +
		"The Canonical String for this request should have been\n'POST\n/model/m/converse\n\nhost:bedrock-runtime.us-east-1.amazonaws.com\n" +
		"x-amz-date:20250101T120000Z\nx-amz-security-token:" + leakedToken + "\n\nhost;x-amz-date;x-amz-security-token\n" +
		"5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7'"})
	answer := strings.Replace(recorderConverseOut, `"Hello"`, `"your key is `+leakedKeyID+`"`, 1)
	frames := [][]byte{
		eventFrame(t, "event", "messageStart", `{"role":"assistant"}`),
		eventFrame(t, "exception", "validationException", `{"message":"x-amz-security-token:`+leakedToken+`"}`),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch {
		case strings.HasSuffix(r.URL.Path, "/converse-stream"):
			w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
			for _, f := range frames {
				w.Write(f)
			}
		case r.URL.Query().Get("fail") != "":
			w.Header().Set("X-Amzn-ErrorType", "InvalidSignatureException")
			w.WriteHeader(http.StatusForbidden)
			w.Write(invalidSig)
		default:
			io.WriteString(w, answer)
		}
	}))
	defer srv.Close()

	rec := recording.NewRecorder(srv.Client())
	for _, op := range []string{"converse?fail=1", "converse", "converse-stream"} {
		resp := mustDo(t, rec, newSignedRequest(t, srv.URL, recorderModel, op, `{"messages":[{"role":"user","content":[{"text":"aws_session_token=`+leakedToken+`"}]}]}`))
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}

	path := filepath.Join(t.TempDir(), "rec.json")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	require.NoError(t, rec.Save(path))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, secret := range []string{leakedToken, leakedKeyID} {
		assert.NotContains(t, string(data), secret)
	}
	assert.Equal(t, 6, strings.Count(string(data), "[REDACTED]"), string(data))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	_, err = recording.Load(path)
	assert.NoError(t, err)
	entries, _ := os.ReadDir(filepath.Dir(path))
	assert.Len(t, entries, 1) // no temporary file left behind
}

// A 200 Converse answer that is not JSON (a proxy's page, say) is recorded
// as text, saved, and replayed as it came.
func TestRecorderSavesNonJSONConverseAnswer(t *testing.T) {
	const page = "<html>upstream connect error</html>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, page)
	}))
	defer srv.Close()
	rec := recording.NewRecorder(srv.Client())
	resp := mustDo(t, rec, newSignedRequest(t, srv.URL, recorderModel, "converse", recorderRequestBody))
	resp.Body.Close()

	path := filepath.Join(t.TempDir(), "rec.json")
	require.NoError(t, rec.Save(path))
	loaded, err := recording.Load(path)
	require.NoError(t, err)
	replay := bedrocktest.NewServer(bedrocktest.ReplayT(t, loaded))
	defer replay.Close()
	req := newSignedRequest(t, replay.URL, recorderModel, "converse", recorderRequestBody)
	resp = mustDo(t, replay.HTTPClient(), req)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, page, string(body))
}

// A conversation that fails midway, with a stream given up before its
// first event, still leaves a recording of the calls made.
func TestRecorderSavesFailedConversation(t *testing.T) {
	srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("first"), bedrocktest.Text("second")))
	defer srv.Close()
	rec := recording.NewRecorder(srv.HTTPClient())
	client := srv.Client(func(o *bedrockruntime.Options) {
		o.HTTPClient = rec
		o.Retryer = retry.AddWithMaxAttempts(o.Retryer, 1)
	})
	in := &bedrockruntime.ConverseInput{ModelId: aws.String(recorderModel), Messages: []types.Message{userMessage("Hi")}}
	_, err := client.Converse(t.Context(), in)
	require.NoError(t, err)
	// A stream closed before its first event is left out.
	resp := mustDo(t, rec, newSignedRequest(t, srv.URL, recorderModel, "converse-stream", recorderRequestBody))
	resp.Body.Close()

	_, err = client.Converse(t.Context(), in) // the script is exhausted
	require.Error(t, err)

	path := filepath.Join(t.TempDir(), "rec.json")
	require.NoError(t, rec.Save(path))
	loaded, err := recording.Load(path)
	require.NoError(t, err)
	require.Len(t, loaded.Exchanges, 2)
	assert.Equal(t, 200, loaded.Exchanges[0].Status)
	assert.True(t, loaded.Exchanges[1].Status >= 400, loaded.Exchanges[1])
}
