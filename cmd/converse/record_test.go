package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
)

// noCredentialsEnv is an environment with no AWS configuration at all.
func noCredentialsEnv(t *testing.T) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AWS_EC2_METADATA_DISABLED=true"}
}

// TestRecordReplay records a conversation with -record, then replays it
// offline, without credentials, with -replay.
func TestRecordReplay(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "chat.json")
	srv := newServer(t, multiply())
	const prompt = "What is 6 times 7?"
	recorded := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-record", file, prompt)
	require.Zero(t, recorded.code, "record: stderr:\n%s", recorded.stderr)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	for _, secret := range []string{fakeKeyID, fakeSecret, fakeToken, "AWS4-HMAC-SHA256", "Signature", "Authorization", "X-Amz-", "x-amz-"} {
		assert.NotContains(t, string(data), secret, "the recording holds a secret")
	}
	rec, err := recording.Load(file)
	require.NoError(t, err)
	require.Len(t, rec.Exchanges, 2, "recording")
	require.Equal(t, defaultModel, rec.Exchanges[0].ModelID, "recording: first model")

	replayed := runBinary(t, noCredentialsEnv(t), nil, "-replay", file, prompt)
	assert.Zero(t, replayed.code, "replay: stderr:\n%s", replayed.stderr)
	assert.Equal(t, recorded.stdout, replayed.stdout, "replay")

	other := runBinary(t, noCredentialsEnv(t), nil, "-replay", file, "What is 6 times 8?")
	assert.Equal(t, exitCaller, other.code, "replay of another prompt: exit")
	mustContain(t, "stderr", other.stderr, "request 1 differs from the recording", `want "What is 6 times 7?", got "What is 6 times 8?"`, "-replay-lenient")

	lenient := runBinary(t, noCredentialsEnv(t), nil, "-replay", file, "-replay-lenient", "What is 6 times 8?")
	assert.Zero(t, lenient.code, "lenient replay: stderr:\n%s", lenient.stderr)
	assert.Equal(t, recorded.stdout, lenient.stdout, "lenient replay")
}

// TestReplayFollowsRecording: without -model and -stream, a replay uses
// the recording's model and operation, not $BEDROCK_MODEL_ID.
func TestReplayFollowsRecording(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "chat.json")
	srv := newServer(t, multiply())
	const model = "us.amazon.nova-lite-v1:0"
	recorded := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-record", file, "-model", model, "-stream", "-system", "Be brief.", "6*7?")
	require.Zero(t, recorded.code, "record: stderr:\n%s", recorded.stderr)
	env := append(noCredentialsEnv(t), "BEDROCK_MODEL_ID=some.other-model")
	replayed := runBinary(t, env, nil, "-replay", file, "-system", "Be brief.", "-v", "6*7?")
	assert.Zero(t, replayed.code, "replay: stderr:\n%s", replayed.stderr)
	assert.Equal(t, recorded.stdout, replayed.stdout, "replay")
	mustContain(t, "stderr", replayed.stderr, "· model "+model+", replaying "+file+" offline")

	wrong := runBinary(t, noCredentialsEnv(t), nil, "-replay", file, "-system", "Be brief.", "-stream=false", "6*7?")
	assert.Equal(t, exitCaller, wrong.code, "replay of a stream with Converse: exit")
	mustContain(t, "stderr", wrong.stderr, "request 1 is Converse but exchange 1 of the recording is ConverseStream")
}

// TestRecordFailure: a failed conversation is recorded too, and replays the
// same failure.
func TestRecordFailure(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "denied.json")
	srv := newServer(t, bedrocktest.Fail(1, bedrocktest.AccessDenied("You don't have access to the model with the specified model ID."), nil))
	recorded := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-record", file, "hi")
	replayed := runBinary(t, noCredentialsEnv(t), nil, "-replay", file, "hi")
	require.Equal(t, exitCaller, recorded.code, "exit recording")
	require.Equal(t, exitCaller, replayed.code, "exit replaying")
	mustContain(t, "replay", replayed.stderr, "access denied to model "+defaultModel, "You don't have access")
}

// TestRecordUnwritable: a -record file that cannot be written is a usage
// error found before the first model call, not after a paid conversation.
func TestRecordUnwritable(t *testing.T) {
	t.Parallel()
	srv := newServer(t, multiply())
	file := filepath.Join(t.TempDir(), "no-such-dir", "chat.json")
	out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-record", file, "What is 6 times 7?")
	assert.Equal(t, 2, out.code, "exit; stderr:\n%s", out.stderr)
	mustContain(t, "stderr", out.stderr, "converse: -record "+file+": no such file or directory")
	assert.Empty(t, srv.Requests(), "model calls before the -record file was found unwritable")
}

// TestRecordFailedTurn: a conversation that fails on its second model call
// still leaves a recording, holding the first.
func TestRecordFailedTurn(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "chat.json")
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("Let me work that out.", bedrocktest.Call{ID: "tooluse_calc1", Name: "calculator", Input: map[string]any{"a": 6, "b": 7, "operation": "multiply"}}),
	)) // the second call finds the script exhausted: an error
	out := runBinary(t, testEnv(t, "AWS_MAX_ATTEMPTS=1"), nil, "-endpoint", srv.URL, "-record", file, "What is 6 times 7?")
	assert.Equal(t, exitCaller, out.code, "exit; stderr:\n%s", out.stderr)
	rec, err := recording.Load(file)
	require.NoError(t, err, "no recording after a failed turn; stderr:\n%s", out.stderr)
	require.NotEmpty(t, rec.Exchanges, "the first turn's tool call first")
	assert.Empty(t, rec.Exchanges[0].ErrorType, "the first turn's tool call first")
	assert.Contains(t, string(rec.Exchanges[0].Response), "tooluse_calc1", "the first turn's tool call first")
}
