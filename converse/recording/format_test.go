package recording_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/recording"
)

var updateRecordingGolden = flag.Bool("update", false, "rewrite the golden files in testdata/")

// sampleRecording holds one exchange of every kind the format knows, with
// bodies as compact as on the wire.
func sampleRecording() *recording.Recording {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	rec := sampleRecordingV1()
	rec.Version = recording.Version
	rec.Exchanges = append(rec.Exchanges,
		recording.Exchange{
			Operation: recording.OpConverseStream,
			ModelID:   "anthropic.claude-3-5-haiku-20241022-v1:0",
			Request:   raw(`{"messages":[{"role":"user","content":[{"text":"Once more"}]}]}`),
			Status:    200,
			Events: []recording.Event{
				{Type: "messageStart", Payload: raw(`{"p":"abc","role":"assistant"}`)},
				{Type: "InternalFailure", Payload: raw(`{"message":"An internal error occurred."}`), MessageType: "error"},
			},
		},
		recording.Exchange{
			Operation: recording.OpConverseStream,
			ModelID:   "anthropic.claude-3-5-haiku-20241022-v1:0",
			Request:   raw(`{"messages":[{"role":"user","content":[{"text":"And again"}]}]}`),
			Status:    200,
			Events: []recording.Event{
				{Type: "messageStart", Payload: raw(`{"p":"abc","role":"assistant"}`)},
			},
			DecodeError: "message checksum mismatch",
		},
	)
	return rec
}

// sampleRecordingV1 is sampleRecording as version 1 knew it, the recording
// of testdata/recording-v1.json, which -update leaves alone.
func sampleRecordingV1() *recording.Recording {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	return &recording.Recording{
		Version: 1,
		Exchanges: []recording.Exchange{
			{
				Operation: recording.OpConverse,
				ModelID:   "anthropic.claude-3-5-haiku-20241022-v1:0",
				Request:   raw(`{"messages":[{"role":"user","content":[{"text":"What is 2 < 3 & 4 > 1?"}]}],"toolConfig":{"tools":[{"toolSpec":{"name":"calc","inputSchema":{"json":{"type":"object"}}}}]}}`),
				Status:    200,
				Response:  raw(`{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_1","name":"calc","input":{"expr":"2<3"}}}]}},"stopReason":"tool_use","usage":{"inputTokens":12,"outputTokens":7,"totalTokens":19},"metrics":{"latencyMs":105}}`),
			},
			{
				Operation: recording.OpConverseStream,
				ModelID:   "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0",
				Request:   raw(`{"messages":[{"role":"user","content":[{"text":"Hi"}]}]}`),
				Status:    200,
				Events: []recording.Event{
					{Type: "messageStart", Payload: raw(`{"p":"abc","role":"assistant"}`)},
					{Type: "contentBlockDelta", Payload: raw(`{"contentBlockIndex":0,"delta":{"text":"Hel\u006co"},"p":"ab"}`)},
					{Type: "contentBlockStop", Payload: raw(`{"contentBlockIndex":0,"p":"a"}`)},
					{Type: "modelStreamErrorException", Payload: raw(`{"message":"the model stopped","originalStatusCode":500}`)},
				},
			},
			{
				Operation: recording.OpConverse,
				ModelID:   "anthropic.claude-3-5-haiku-20241022-v1:0",
				Request:   raw(`{"messages":[{"role":"user","content":[{"text":"Again"}]}]}`),
				Status:    429,
				ErrorType: "ThrottlingException",
				Response:  raw(`{"message":"Too many requests, please wait before trying again."}`),
			},
			{
				Operation: recording.OpConverseStream,
				ModelID:   "anthropic.claude-3-5-haiku-20241022-v1:0",
				Request:   raw(`{"messages":[{"role":"user","content":[{"text":"Again"}]}]}`),
				Status:    502,
				Response:  raw(`"<html>Bad Gateway</html>"`),
			},
		},
	}
}

func TestRecordingGolden(t *testing.T) {
	golden := filepath.Join("testdata", "recording.json")
	rec := sampleRecording()

	var buf bytes.Buffer
	n, err := rec.WriteTo(&buf)
	require.NoError(t, err)
	assert.Equal(t, int64(buf.Len()), n, "WriteTo's count of the bytes it wrote")
	if *updateRecordingGolden {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test -update to create it")
	assert.Equal(t, string(want), buf.String(), "WriteTo differs from %s (run go test -update if the change is intended)", golden)
	assert.Contains(t, string(want), "2 < 3 & 4 > 1", "recorded text is HTML-escaped")

	loaded, err := recording.Load(golden)
	require.NoError(t, err)
	assert.Equal(t, rec, loaded, "LoadRecording did not give back the compact bodies")

	// Saving a loaded recording writes the same bytes.
	assert.Equal(t, string(want), string(savedBytes(t, loaded)), "Save after LoadRecording differs from the golden file")
}

// savedBytes saves a Recording or a Recorder's recording to a file and
// returns what the file holds.
func savedBytes(t *testing.T, s interface{ Save(path string) error }) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "saved.json")
	require.NoError(t, s.Save(path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestRecordingVersion1 reads a file of version 1 back, as version 2
// reads it, and serves it as it did.
func TestRecordingVersion1(t *testing.T) {
	golden := filepath.Join("testdata", "recording-v1.json")
	loaded, err := recording.Load(golden)
	require.NoError(t, err)
	assert.Equal(t, sampleRecordingV1(), loaded)
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(savedBytes(t, loaded)), "a version 1 recording is saved as version 1")
}

func TestRecordingWriteToDefaults(t *testing.T) {
	var buf bytes.Buffer
	_, err := (&recording.Recording{}).WriteTo(&buf)
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"version\": 2,\n  \"exchanges\": []\n}\n", buf.String(), "empty recording")
	rec, err := recording.Read(&buf)
	require.NoError(t, err)
	assert.Empty(t, rec.Exchanges)
}

func TestRecordingRejectsMalformed(t *testing.T) {
	const ok = `{"operation":"Converse","modelId":"m","request":{},"status":200,"response":{}}`
	const okStream = `{"operation":"ConverseStream","modelId":"m","request":{},"status":200,"events":[{"type":"messageStart","payload":{}}]}`
	tests := []struct {
		name, file, want string
	}{
		{"not JSON", `{"version":1,`, "unexpected EOF"},
		{"trailing data", `{"version":1,"exchanges":[]} {}`, "data after"},
		{"unknown version", `{"version":3,"exchanges":[]}`, "unsupported version 3 (want 1 to 2)"},
		{"no version", `{"exchanges":[]}`, "unsupported version 0"},
		{"unknown field", `{"version":1,"exchanges":[{"operation":"Converse","headers":{}}]}`, `unknown field "headers"`},
		{"unknown operation", `{"version":1,"exchanges":[` + ok + `,{"operation":"InvokeModel","modelId":"m","request":{},"status":200}]}`,
			`exchange 2: unknown operation "InvokeModel"`},
		{"no model", `{"version":1,"exchanges":[{"operation":"Converse","request":{},"status":200,"response":{}}]}`, "exchange 1: no modelId"},
		{"no request", `{"version":1,"exchanges":[{"operation":"Converse","modelId":"m","status":200,"response":{}}]}`, "exchange 1: no request body"},
		{"request not object", `{"version":1,"exchanges":[{"operation":"Converse","modelId":"m","request":[],"status":200,"response":{}}]}`,
			"exchange 1: request body is not a JSON object or string"},
		{"no status", `{"version":1,"exchanges":[{"operation":"Converse","modelId":"m","request":{},"response":{}}]}`, "exchange 1: no status"},
		{"bad status", `{"version":1,"exchanges":[{"operation":"Converse","modelId":"m","request":{},"status":700}]}`,
			"exchange 1: status 700 is not an HTTP response status"},
		{"converse without response", `{"version":1,"exchanges":[{"operation":"Converse","modelId":"m","request":{},"status":200}]}`,
			"exchange 1: a successful Converse exchange has no response body"},
		{"converse with events", `{"version":1,"exchanges":[{"operation":"Converse","modelId":"m","request":{},"status":200,"response":{},"events":[{"type":"messageStart","payload":{}}]}]}`,
			"exchange 1: a Converse exchange has events"},
		{"stream without events", `{"version":1,"exchanges":[` + okStream + `,{"operation":"ConverseStream","modelId":"m","request":{},"status":200}]}`,
			"exchange 2: stream has no events and is not an error"},
		{"stream with response", `{"version":1,"exchanges":[{"operation":"ConverseStream","modelId":"m","request":{},"status":200,"response":{},"events":[{"type":"messageStart","payload":{}}]}]}`,
			"exchange 1: a successful ConverseStream exchange has a response body"},
		{"event without type", `{"version":1,"exchanges":[{"operation":"ConverseStream","modelId":"m","request":{},"status":200,"events":[{"type":"messageStart","payload":{}},{"payload":{}}]}]}`,
			"exchange 1: event 2: no type"},
		{"exception not last", `{"version":1,"exchanges":[{"operation":"ConverseStream","modelId":"m","request":{},"status":200,"events":[{"type":"throttlingException","payload":{}},{"type":"messageStop","payload":{}}]}]}`,
			"exchange 1: event 1: exception throttlingException is not the last event"},
		{"error message not last", `{"version":2,"exchanges":[{"operation":"ConverseStream","modelId":"m","request":{},"status":200,"events":[{"type":"InternalFailure","payload":null,"messageType":"error"},{"type":"messageStop","payload":{}}]}]}`,
			"exchange 1: event 1: error InternalFailure is not the last event"},
		{"unknown message type", `{"version":2,"exchanges":[{"operation":"ConverseStream","modelId":"m","request":{},"status":200,"events":[{"type":"messageStart","payload":{},"messageType":"ping"}]}]}`,
			`exchange 1: event 1 (messageStart): unknown messageType "ping"`},
		{"message type in version 1", `{"version":1,"exchanges":[{"operation":"ConverseStream","modelId":"m","request":{},"status":200,"events":[{"type":"InternalFailure","payload":null,"messageType":"error"}]}]}`,
			"exchange 1: event 1: messageType (version 2 has it, version 1 does not)"},
		{"decode error in version 1", `{"version":1,"exchanges":[{"operation":"ConverseStream","modelId":"m","request":{},"status":200,"events":[{"type":"messageStart","payload":{}}],"decodeError":"message checksum mismatch"}]}`,
			"exchange 1: decodeError (version 2 has it, version 1 does not)"},
		{"decode error after an exception", `{"version":2,"exchanges":[{"operation":"ConverseStream","modelId":"m","request":{},"status":200,"events":[{"type":"throttlingException","payload":{}}],"decodeError":"message checksum mismatch"}]}`,
			"exchange 1: event 1: a decodeError after the exception throttlingException"},
		{"decode error on Converse", `{"version":2,"exchanges":[{"operation":"Converse","modelId":"m","request":{},"status":200,"response":{},"decodeError":"x"}]}`,
			"exchange 1: a Converse exchange has a decodeError"},
		{"decode error on an error response", `{"version":2,"exchanges":[{"operation":"ConverseStream","modelId":"m","request":{},"status":500,"decodeError":"x"}]}`,
			"exchange 1: error response (status 500) has a decodeError"},
		{"error with events", `{"version":1,"exchanges":[{"operation":"ConverseStream","modelId":"m","request":{},"status":400,"events":[{"type":"messageStart","payload":{}}]}]}`,
			"exchange 1: error response (status 400) has events"},
		{"error type on success", `{"version":1,"exchanges":[{"operation":"Converse","modelId":"m","request":{},"status":200,"errorType":"ValidationException","response":{}}]}`,
			`exchange 1: errorType "ValidationException" on a successful response`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := recording.Read(strings.NewReader(tt.file))
			require.Error(t, err, "ReadRecording accepted it")
			assert.True(t, strings.HasPrefix(err.Error(), "recording: "), "error %q does not start with recording: ", err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestLoadRecordingNamesFileAndExchange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.json")
	bad := `{"version":1,"exchanges":[{"operation":"Converse","modelId":"m","request":{},"status":200,"response":{}},` +
		`{"operation":"ConverseStream","modelId":"m","request":{},"status":200}]}`
	require.NoError(t, os.WriteFile(path, []byte(bad), 0o644))

	_, err := recording.Load(path)
	assert.EqualError(t, err, "recording: "+path+": exchange 2: stream has no events and is not an error")
	_, err = recording.Load(filepath.Join(t.TempDir(), "missing.json"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestSaveRefusesInvalidRecording(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	rec := &recording.Recording{Exchanges: []recording.Exchange{{Operation: recording.OpConverse, ModelID: "m", Status: 200}}}
	assert.EqualError(t, rec.Save(path), "recording: save: exchange 1: no request body")
	_, err := os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "Save left a file behind")

	var nilRec *recording.Recording
	_, err = nilRec.WriteTo(&bytes.Buffer{})
	assert.Error(t, err, "WriteTo of a nil recording succeeded")
}
