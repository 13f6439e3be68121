package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// loop is a model that never stops asking for the time.
func loop() bedrocktest.Handler {
	return bedrocktest.HandlerFunc(func(_ context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		id := fmt.Sprintf("tooluse_%d", len(req.Messages))
		return bedrocktest.ToolUse("", bedrocktest.Call{ID: id, Name: "get_current_datetime"}), nil
	})
}

// cutToolCall is a reply that runs out of tokens in the middle of a call.
func cutToolCall() *bedrocktest.Reply {
	return bedrocktest.Output(types.StopReasonMaxTokens,
		&types.ContentBlockMemberText{Value: "Let me calculate"},
		&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
			ToolUseId: aws.String("tooluse_cut"), Name: aws.String("calculator"),
			Input: document.NewLazyDocument(map[string]any{"a": 1}),
		}})
}

// TestFailures checks the exit status (by the failure's converse.Outcome)
// and the one line that explains each failure, in-process.
func TestFailures(t *testing.T) {
	tests := []struct {
		name    string
		handler bedrocktest.Handler
		args    []string
		want    []string
		code    int
	}{
		{"access denied", bedrocktest.Fail(1, bedrocktest.AccessDenied("You don't have access to the model with the specified model ID."), nil),
			[]string{"-region", "eu-west-3"},
			[]string{"access denied to model " + defaultModel + " in region eu-west-3", "You don't have access", "enable access to this model", "Model access"}, exitCaller},
		{"unknown model", bedrocktest.Fail(1, bedrocktest.Validation("The provided model identifier is invalid."), nil),
			[]string{"-model", "anthropic.claude-9"},
			[]string{"Bedrock rejected the request: The provided model identifier is invalid.", "model anthropic.claude-9", "check the model ID"}, exitCaller},
		{"model not found", bedrocktest.Fail(1, bedrocktest.ResourceNotFound("Model not found."), nil),
			[]string{"-model", "anthropic.claude-9"},
			[]string{"model anthropic.claude-9 not found in region us-east-1: Model not found.", "list-foundation-models"}, exitCaller},
		{"on-demand", bedrocktest.Fail(1, bedrocktest.Validation("Invocation of model ID anthropic.claude-sonnet-4-20250514-v1:0 with on-demand throughput isn’t supported."), nil),
			[]string{"-model", "anthropic.claude-sonnet-4-20250514-v1:0"},
			[]string{"on-demand throughput", "-model us.anthropic.claude-sonnet-4-20250514-v1:0"}, exitCaller},
		{"validation", bedrocktest.Fail(1, bedrocktest.Validation("messages.0.content: too long"), nil), nil,
			[]string{"converse: Bedrock rejected the request: messages.0.content: too long\n"}, exitCaller},
		{"throttled", bedrocktest.Fail(1, bedrocktest.Throttling(), nil), nil,
			[]string{"throttled", "AWS_MAX_ATTEMPTS"}, exitRetry},
		{"bad credentials", bedrocktest.Fail(1, &bedrocktest.Error{Status: 403, Type: "UnrecognizedClientException", Message: "The security token included in the request is invalid."}, nil), nil,
			[]string{"did not accept the credentials", "security token"}, exitCaller},
		{"turn limit", loop(), []string{"-max-turns", "2"},
			[]string{"turn limit reached", "after 2 model calls", "raise -max-turns"}, exitLimit},
		{"turn limit of 1", loop(), []string{"-max-turns", "1"},
			[]string{"turn limit reached: the model still wanted tools after 1 model call (-max-turns 1)"}, exitLimit},
		{"budget refused before anything was spent", bedrocktest.Script(bedrocktest.Text("Hi.")), []string{"-max-tokens-total", "1"},
			[]string{"limit 1 tokens reached before anything was spent: the first step needs "}, exitLimit},
		{"max tokens in a tool call", bedrocktest.Script(cutToolCall()), []string{"-max-tokens", "50"},
			[]string{"ran out of output tokens (max_tokens) in the middle of a tool call", "raise -max-tokens (now 50)"}, exitCaller},
		{"broken stream", bedrocktest.Script(&bedrocktest.Reply{Output: bedrocktest.Text("Hello there").Output, DropMessageStop: true}), []string{"-stream", "-retries", "0"},
			[]string{"stream broke off", "leave out -stream"}, exitRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AWS_MAX_ATTEMPTS", "1")
			srv := newServer(t, tt.handler)
			args := append([]string{"-endpoint", srv.URL}, tt.args...)
			out := runInProcess(t, nil, append(args, "Hello")...)
			assert.Equal(t, tt.code, out.code, "exit status")
			mustContain(t, "stderr", out.stderr, tt.want...)
			assert.Equal(t, 1, strings.Count(out.stderr, "\n"), "lines on stderr:\n%s", out.stderr)
		})
	}
}

// TestCutAnswer: an answer cut off at max_tokens outside a tool call is not
// a failure, but it is said.
func TestCutAnswer(t *testing.T) {
	srv := newServer(t, bedrocktest.Script(bedrocktest.Output(types.StopReasonMaxTokens, &types.ContentBlockMemberText{Value: "The answer is"})))
	out := runInProcess(t, nil, "-endpoint", srv.URL, "Hello")
	assert.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, "The answer is\n", out.stdout)
	mustContain(t, "stderr", out.stderr, "cut off", "raise -max-tokens (now the model's default)")
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.json")
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"version": 1, "exchanges": [{"operation": "Talk"}]}`), 0o644))
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"unknown flag", "", []string{"-frobnicate", "hi"}, "flag provided but not defined: -frobnicate"},
		{"bad number", "", []string{"-max-tokens", "lots", "hi"}, `invalid value "lots" for flag -max-tokens`},
		{"negative max tokens", "", []string{"-max-tokens", "-1", "hi"}, "-max-tokens -1"},
		{"zero turns", "", []string{"-max-turns", "0", "hi"}, "-max-turns 0: want at least 1"},
		{"temperature", "", []string{"-temperature", "7", "hi"}, "-temperature 7"},
		{"temperature above Bedrock's", "", []string{"-temperature", "1.5", "hi"}, "-temperature 1.5: want a number from 0 to 1"},
		{"empty model", "", []string{"-model", " ", "hi"}, "-model: empty model ID"},
		{"endpoint", "", []string{"-endpoint", "localhost:8080", "hi"}, `-endpoint "localhost:8080"`},
		{"replay and endpoint", "", []string{"-replay", bad, "-endpoint", "http://127.0.0.1:1", "hi"}, "-replay and -endpoint cannot be used together"},
		{"lenient alone", "", []string{"-replay-lenient", "hi"}, "-replay-lenient needs -replay"},
		{"record over replay", "", []string{"-replay", bad, "-record", bad, "hi"}, "-record and -replay name the same file"},
		{"missing manifest", "", []string{"-tools", missing, "hi"}, "-tools: open " + missing},
		{"missing recording", "", []string{"-replay", missing, "hi"}, "-replay: recording: open " + missing},
		{"bad recording", "", []string{"-replay", bad, "hi"}, "-replay: recording: " + bad + ": "},
		{"no prompt", " \n", nil, "no prompt"},
		{"empty prompt", "", []string{""}, "empty prompt"},
		{"missing profile", "", []string{"-profile", "nosuch", "hi"}, `profile "nosuch"`},
		{"flag after the prompt", "", []string{"hello", "-v"}, "flag -v after the prompt: put the flags first (converse -v PROMPT), or -- before the prompt to send -v as text"},
		{"flag with value after the prompt", "", []string{"hello", "--max-turns=3"}, "flag --max-turns=3 after the prompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := runInProcess(t, strings.NewReader(tt.stdin), tt.args...)
			assert.Equal(t, 2, out.code, out.stderr)
			mustContain(t, "stderr", out.stderr, "converse: "+tt.want)
		})
	}
}

// TestFlagLikeWordsAfterTheDashes: after --, and for words that are no
// flag of converse, the words are the prompt's.
func TestFlagLikeWordsAfterTheDashes(t *testing.T) {
	for _, args := range [][]string{{"--", "hello", "-v"}, {"hello", "-x"}, {"hello", "--", "-v"}} {
		s, err := promptCommand.parse(args, io.Discard)
		require.NoError(t, err, args)
		assert.Contains(t, strings.Join(s.prompt, " "), "hello", args)
		assert.False(t, s.verbose, args)
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	out := runBinary(t, testEnv(t), nil, "-h")
	assert.Equal(t, 0, out.code, out.stderr)
	mustContain(t, "usage", out.stdout, "usage: converse [flags] [prompt ...]", "-max-turns N", "-replay file", "Exit status")
}

// TestExitStatus checks the exit status of the process itself.
func TestExitStatus(t *testing.T) {
	t.Parallel()
	srv := newServer(t, bedrocktest.Fail(1, bedrocktest.AccessDenied("no"), multiply()))
	out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "hi")
	assert.Equal(t, exitCaller, out.code, "access denied: %s", out.stderr)
	out = runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "hi")
	assert.Equal(t, 0, out.code, "success: %s", out.stderr)
	out = runBinary(t, testEnv(t), nil, "-max-turns", "x", "hi")
	assert.Equal(t, 2, out.code, "bad flag: %s", out.stderr)
}

// TestExitStatusByOutcome: each converse.Outcome has an exit status of
// its own, which converse help exit lists.
func TestExitStatusByOutcome(t *testing.T) {
	throttled := &smithy.OperationError{ServiceID: "Bedrock Runtime", OperationName: "Converse", Err: &types.ThrottlingException{Message: aws.String("slow down")}}
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"no error", nil, 0},
		{"usage", usagef("-max-turns 0: want at least 1"), exitUsage},
		{"usage of a recording holding an API error", usagef("-replay: %w", &types.ValidationException{}), exitUsage},
		{"throttled", fmt.Errorf("converse: turn 1: %w", throttled), exitRetry},
		{"access denied", fmt.Errorf("converse: turn 1: %w", &types.AccessDeniedException{}), exitCaller},
		{"no credentials, the lookup timed out", noCredentials(context.DeadlineExceeded), exitCaller},
		{"turn limit", explain(fmt.Errorf("converse: turn 2: %w", converse.ErrMaxTurns), where{maxTurns: 2}), exitLimit},
		{"budget", explain(&converse.BudgetError{Limit: "cost", Max: 0.01}, where{}), exitLimit},
		{"paused", &converse.PausedError{Pending: []converse.Call{{ID: "t1", Tool: "send"}}}, exitPaused},
		{"session changed", explain(fmt.Errorf("converse: %w", converse.ErrSessionChanged), where{session: "s.json"}), exitConflict},
		{"interrupted", explain(context.Canceled, where{}), exitInterrupted},
		{"stopped", fmt.Errorf("converse: turn 2: %w", converse.ErrStopped), exitInterrupted},
		{"malformed output", fmt.Errorf("converse: turn 1: %w", converse.ErrMalformedModelOutput), exitFailure},
		{"anything else", errors.New("mcp: the server exited"), exitFailure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, report(io.Discard, tc.err), "%v", tc.err)
		})
	}
	exit := helpText("exit")
	for _, code := range []int{0, exitFailure, exitUsage, exitRetry, exitCaller, exitLimit, exitPaused, exitConflict, exitInterrupted} {
		assert.Regexp(t, fmt.Sprintf(`(?m)^  %d +\S`, code), exit, "converse help exit lists %d", code)
	}
}

// TestNoCredentials: with nothing configured, converse fails at once,
// without waiting on the EC2 metadata service or calling the model, and
// says how to configure credentials.
func TestNoCredentials(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		http.NotFound(w, nil)
	}))
	t.Cleanup(imds.Close)
	env := append(noCredentialsEnv(t), "AWS_EC2_METADATA_SERVICE_ENDPOINT="+imds.URL)
	out := runBinary(t, env, nil, "What time is it?")
	assert.Equal(t, exitCaller, out.code, "exit status")
	mustContain(t, "stderr", out.stderr, "converse: no AWS credentials found", "AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID", "-profile", "aws configure",
		`-replay testdata/demo.json "`+demoPrompt+`"`)
	assert.Zero(t, calls.Load(), "requests to the metadata service")
}

// TestBedrockAPIKey: a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK is
// credentials enough. The client sends it as a bearer token, over HTTPS only,
// whether -endpoint or the configuration names the endpoint. A plain http one
// on this machine gets no key. (TestLoopbackCredentials sends it.)
func TestBedrockAPIKey(t *testing.T) {
	setTestEnv(t)
	for _, name := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"} {
		t.Setenv(name, "")
	}
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", fakeAPIKey)
	const keyAuth = "a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK)"
	tests := []struct {
		name, endpoint string
		configured     string // AWS_ENDPOINT_URL_BEDROCK_RUNTIME
		usage          string // the usage error, if any
		auth           string // else how the requests are authenticated
	}{
		{"Bedrock", "", "", "", keyAuth},
		{"an https endpoint", "https://vpce-0123.bedrock-runtime.us-east-1.vpce.amazonaws.com", "", "", keyAuth},
		{"an http endpoint", "http://bedrock.example.com", "", "-endpoint http://bedrock.example.com: a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) is sent over HTTPS only", ""},
		{"an https endpoint configured", "", "https://vpce-0123.bedrock-runtime.us-east-1.vpce.amazonaws.com", "", keyAuth},
		{"an http endpoint configured", "", "http://bedrock.example.com",
			"the Bedrock endpoint http://bedrock.example.com of the configuration (AWS_ENDPOINT_URL_BEDROCK_RUNTIME, AWS_ENDPOINT_URL or the profile's endpoint_url): a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) is sent over HTTPS only", ""},
		{"a local http endpoint configured", "", "http://127.0.0.1:8080", "",
			"none: the requests to the local endpoint are unsigned (a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK is sent over HTTPS only)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", tt.configured)
			var args []string
			if tt.endpoint != "" {
				args = []string{"-endpoint", tt.endpoint}
			}
			s, err := promptCommand.parse(append(args, "hi"), io.Discard)
			require.NoError(t, err)
			b, err := newBackend(context.Background(), s, nil)
			if tt.usage != "" {
				require.True(t, isUsage(err), "a usage error: %v", err)
				assert.ErrorContains(t, err, tt.usage)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.auth, b.auth)
		})
	}
}

// TestProfile: -profile takes credentials and region from the shared files.
func TestProfile(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".aws"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".aws", "config"), []byte("[profile dev]\nregion = ap-southeast-2\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".aws", "credentials"), []byte("[dev]\naws_access_key_id = "+fakeKeyID+"\naws_secret_access_key = "+fakeSecret+"\n"), 0o600))
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "AWS_EC2_METADATA_DISABLED=true"}

	srv := newServer(t, bedrocktest.Script(bedrocktest.Text("Hi.")))
	out := runBinary(t, env, nil, "-profile", "dev", "-endpoint", srv.URL, "-v", "hi")
	require.Equal(t, 0, out.code, out.stderr)
	require.Equal(t, "Hi.\n", out.stdout)
	mustContain(t, "stderr", out.stderr, "in region ap-southeast-2")

	out = runBinary(t, env, nil, "-endpoint", "https://bedrock-runtime.us-east-1.amazonaws.com", "hi")
	assert.Equal(t, exitCaller, out.code, "without -profile")
	mustContain(t, "stderr without -profile", out.stderr, "no AWS credentials")
}

// TestLoopbackWithoutCredentials: a local server needs no AWS account, so
// with -endpoint on loopback, missing credentials are no error.
func TestLoopbackWithoutCredentials(t *testing.T) {
	t.Parallel()
	srv := newServer(t, bedrocktest.Script(bedrocktest.Text("Hi."), bedrocktest.Text("Hi."), bedrocktest.Text("Hi.")))
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	for _, endpoint := range []string{srv.URL, "http://localhost" + port, "http://[::1]" + port} {
		out := runBinary(t, noCredentialsEnv(t), nil, "-endpoint", endpoint, "hi")
		if strings.Contains(endpoint, "::1") && strings.Contains(out.stderr, "cannot reach") {
			continue // the server listens on 127.0.0.1 only
		}
		assert.Equal(t, 0, out.code, "-endpoint %s: %s", endpoint, out.stderr)
		assert.Equal(t, "Hi.\n", out.stdout, "-endpoint %s", endpoint)
	}
	for _, endpoint := range []string{"http://example.com", "http://10.0.0.1"} {
		assert.False(t, isLoopback(endpoint), endpoint)
	}
}

// TestJSONFailure: with -json, a failure still gives the JSON object, with
// the error and what was done before it.
func TestJSONFailure(t *testing.T) {
	srv := newServer(t, loop())
	out := runInProcess(t, nil, "-endpoint", srv.URL, "-json", "-max-turns", "1", "Hello")
	assert.Equal(t, exitLimit, out.code, "exit status")
	var got jsonResult
	require.NoError(t, json.Unmarshal([]byte(out.stdout), &got), out.stdout)
	assert.Contains(t, got.Error, "turn limit reached")
	assert.Equal(t, 1, got.Turns)
	assert.Equal(t, "tool_use", got.StopReason)
	mustContain(t, "stderr", out.stderr, "converse: turn limit reached")
}

func TestUnreachableEndpoint(t *testing.T) {
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
	srv := newServer(t, bedrocktest.Script())
	srv.Close() // nothing listens there any more
	out := runInProcess(t, nil, "-endpoint", srv.URL, "Hello")
	assert.Equal(t, exitRetry, out.code, "exit status")
	mustContain(t, "stderr", out.stderr, "converse: cannot reach Bedrock at "+srv.URL+" (-endpoint)")
}
