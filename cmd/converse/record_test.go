package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if recorded.code != 0 {
		t.Fatalf("record: exit %d, stderr:\n%s", recorded.code, recorded.stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{fakeKeyID, fakeSecret, fakeToken, "AWS4-HMAC-SHA256", "Signature", "Authorization", "X-Amz-", "x-amz-"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the recording holds %q", secret)
		}
	}
	rec, err := recording.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Exchanges) != 2 || rec.Exchanges[0].ModelID != defaultModel {
		t.Fatalf("recording: %d exchanges, first model %q", len(rec.Exchanges), rec.Exchanges[0].ModelID)
	}

	replayed := runBinary(t, noCredentialsEnv(t), nil, "-replay", file, prompt)
	if replayed.code != 0 || replayed.stdout != recorded.stdout {
		t.Errorf("replay: exit %d, stdout %q, want %q; stderr:\n%s", replayed.code, replayed.stdout, recorded.stdout, replayed.stderr)
	}

	other := runBinary(t, noCredentialsEnv(t), nil, "-replay", file, "What is 6 times 8?")
	if other.code != 1 {
		t.Errorf("replay of another prompt: exit %d, want 1", other.code)
	}
	mustContain(t, "stderr", other.stderr, "request 1 differs from the recording", `want "What is 6 times 7?", got "What is 6 times 8?"`, "-replay-lenient")

	lenient := runBinary(t, noCredentialsEnv(t), nil, "-replay", file, "-replay-lenient", "What is 6 times 8?")
	if lenient.code != 0 || lenient.stdout != recorded.stdout {
		t.Errorf("lenient replay: exit %d, stdout %q; stderr:\n%s", lenient.code, lenient.stdout, lenient.stderr)
	}
}

// TestReplayFollowsRecording: without -model and -stream, a replay uses
// the recording's model and operation, not $BEDROCK_MODEL_ID.
func TestReplayFollowsRecording(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "chat.json")
	srv := newServer(t, multiply())
	const model = "us.amazon.nova-lite-v1:0"
	recorded := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-record", file, "-model", model, "-stream", "-system", "Be brief.", "6*7?")
	if recorded.code != 0 {
		t.Fatalf("record: exit %d, stderr:\n%s", recorded.code, recorded.stderr)
	}
	env := append(noCredentialsEnv(t), "BEDROCK_MODEL_ID=some.other-model")
	replayed := runBinary(t, env, nil, "-replay", file, "-system", "Be brief.", "-v", "6*7?")
	if replayed.code != 0 || replayed.stdout != recorded.stdout {
		t.Errorf("replay: exit %d, stdout %q, want %q; stderr:\n%s", replayed.code, replayed.stdout, recorded.stdout, replayed.stderr)
	}
	mustContain(t, "stderr", replayed.stderr, "· model "+model+", replaying "+file+" offline")

	wrong := runBinary(t, noCredentialsEnv(t), nil, "-replay", file, "-system", "Be brief.", "-stream=false", "6*7?")
	if wrong.code != 1 {
		t.Errorf("replay of a stream with Converse: exit %d, want 1", wrong.code)
	}
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
	if recorded.code != 1 || replayed.code != 1 {
		t.Fatalf("exit %d recording and %d replaying, want 1", recorded.code, replayed.code)
	}
	mustContain(t, "replay", replayed.stderr, "access denied to model "+defaultModel, "You don't have access")
}

// TestRecordUnwritable: a -record file that cannot be written is a usage
// error found before the first model call, not after a paid conversation.
func TestRecordUnwritable(t *testing.T) {
	t.Parallel()
	srv := newServer(t, multiply())
	file := filepath.Join(t.TempDir(), "no-such-dir", "chat.json")
	out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-record", file, "What is 6 times 7?")
	if out.code != 2 {
		t.Errorf("exit %d, want 2; stderr:\n%s", out.code, out.stderr)
	}
	mustContain(t, "stderr", out.stderr, "converse: -record "+file+": no such file or directory")
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model calls before the -record file was found unwritable", n)
	}
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
	if out.code != 1 {
		t.Errorf("exit %d, want 1; stderr:\n%s", out.code, out.stderr)
	}
	rec, err := recording.Load(file)
	if err != nil {
		t.Fatalf("no recording after a failed turn: %v; stderr:\n%s", err, out.stderr)
	}
	if len(rec.Exchanges) == 0 || rec.Exchanges[0].ErrorType != "" || !strings.Contains(string(rec.Exchanges[0].Response), "tooluse_calc1") {
		t.Errorf("recording %+v: want the first turn's tool call first", rec.Exchanges)
	}
}
