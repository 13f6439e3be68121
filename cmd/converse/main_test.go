package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// binary is the converse command, built by TestMain for the end-to-end
// tests with the race detector and coverage; coverDir receives its
// coverage data. helperArg makes the test binary act as a tool (see
// helperTool).
var binary, coverDir string

const helperArg = "helper-tool"

// coverDirVar names the directory for the binary's coverage data, which
// "make cover" merges with the unit tests' profile; unset, the data goes
// to a temporary directory.
const coverDirVar = "CONVERSE_COVERDIR"

// raceExit is the exit status of a binary whose race detector found a
// data race, when it would otherwise have exited 0 (GORACE exitcode).
const raceExit = 66

// Fake credentials: tests check that none of them reaches a recording.
const (
	fakeKeyID  = "AKIACONVERSETESTKEY1"
	fakeSecret = "converse/test/secret/aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"
	fakeToken  = "FwoGZXIvYXdzConverseTestSessionToken0123456789"
	fakeAPIKey = "ABSKQmVkcm9ja0FQSUtleS1jb252ZXJzZVRlc3Q=" // a Bedrock API key
)

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == helperArg {
		os.Exit(helperTool(os.Args[2], os.Args[3:]))
	}
	os.Exit(testMain(m))
}

// testMain builds the binary, runs the tests and removes the binary.
func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "converse-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "converse")
	coverDir = os.Getenv(coverDirVar)
	if coverDir == "" {
		coverDir = filepath.Join(dir, "cover")
	}
	if err := os.MkdirAll(coverDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	build := exec.Command("go", "build", "-race", "-cover", "-covermode=atomic",
		"-coverpkg=github.com/tooluse/bedrock/...", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building converse:", err)
		return 1
	}
	return m.Run()
}

// helperTool is a tool program for the manifest tests: the test binary
// re-executed as [test binary, helperArg, mode, args...].
func helperTool(mode string, args []string) int {
	switch mode {
	case "echo": // the input object, as the result
		in, _ := io.ReadAll(os.Stdin)
		os.Stdout.Write(in)
	case "args": // the arguments, as a JSON array
		b, _ := json.Marshal(args)
		os.Stdout.Write(b)
	case "env": // the environment, as a JSON array of NAME=value
		b, _ := json.Marshal(os.Environ())
		os.Stdout.Write(b)
	case "text": // text that is not JSON
		fmt.Println("  plain words, not JSON  ")
	case "touch": // leaves a mark that it ran
		os.WriteFile(args[0], nil, 0o644)
		fmt.Println(`"ran"`)
	case "mark": // appends a line to args[0]: the runs can be counted
		if err := appendLine(args[0]); err != nil {
			return 1
		}
		fmt.Println(`"marked"`)
	case "mark-hang": // marks args[0], writes its pid to the pipe args[1], and hangs
		if appendLine(args[0]) != nil || os.WriteFile(args[1], []byte(fmt.Sprintf("%d\n", os.Getpid())), 0o644) != nil {
			return 1
		}
		time.Sleep(time.Hour)
	case "await": // reads a line from the pipe args[0], the test's gate, and answers
		f, err := os.Open(args[0])
		if err != nil {
			return 1
		}
		line, _ := bufio.NewReader(f).ReadString('\n')
		f.Close()
		b, _ := json.Marshal(strings.TrimSpace(line))
		os.Stdout.Write(b)
	case "fail":
		fmt.Fprintln(os.Stderr, "something broke")
		return 3
	case "hang":
		time.Sleep(time.Hour)
	case "spawn": // starts a child that hangs, writes both pids to the pipe args[0], and hangs
		child := exec.Command(os.Args[0], helperArg, "hang")
		if err := child.Start(); err != nil {
			return 1
		}
		pids := fmt.Sprintf("%d %d\n", os.Getpid(), child.Process.Pid)
		if err := os.WriteFile(args[0], []byte(pids), 0o644); err != nil {
			return 1
		}
		time.Sleep(time.Hour)
	case "flood":
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for range 40 { // 2.5 MiB
			if _, err := os.Stdout.Write(chunk); err != nil {
				return 1
			}
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
		return 2
	}
	return 0
}

func appendLine(path string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString("ran\n")
	return err
}

// outcome is what a run of converse did.
type outcome struct {
	stdout, stderr string
	code           int
}

// testEnv is the environment of the converse processes: a HOME of their
// own, fake credentials, and no way to reach the EC2 metadata service.
func testEnv(t *testing.T, extra ...string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_ACCESS_KEY_ID=" + fakeKeyID,
		"AWS_SECRET_ACCESS_KEY=" + fakeSecret,
		"AWS_SESSION_TOKEN=" + fakeToken,
		"AWS_REGION=us-east-1",
	}
	return append(env, extra...)
}

// runBinary runs the converse binary with env and stdin (nil: /dev/null).
func runBinary(t *testing.T, env []string, stdin io.Reader, args ...string) outcome {
	t.Helper()
	return runBinaryIn(t, "", env, stdin, args...)
}

// runBinaryIn is runBinary in the working directory dir ("": the test's).
func runBinaryIn(t *testing.T, dir string, env []string, stdin io.Reader, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, env, args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	return runCommand(t, cmd)
}

// runCommand runs cmd, a binaryCommand, and returns its outcome.
func runCommand(t *testing.T, cmd *exec.Cmd) outcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "running converse")
		code = exit.ExitCode()
	}
	checkRace(t, code, stderr.String())
	return outcome{stdout.String(), stderr.String(), code}
}

// binaryCommand is a run of the converse binary with env, which writes its
// coverage data to coverDir; the caller checks it with checkRace.
func binaryCommand(ctx context.Context, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(slices.Clip(env), "GOCOVERDIR="+coverDir, "GORACE=exitcode="+strconv.Itoa(raceExit))
	return cmd
}

// checkRace fails the test if the race detector found a data race in a
// run of the binary: it says so on standard error, and turns an exit
// status of 0 into raceExit.
func checkRace(t *testing.T, code int, stderr string) {
	t.Helper()
	assert.False(t, code == raceExit || strings.Contains(stderr, "WARNING: DATA RACE"),
		"the race detector found a data race in converse (exit %d):\n%s", code, stderr)
}

// setTestEnv gives an in-process run the environment of testEnv.
func setTestEnv(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_ACCESS_KEY_ID", fakeKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", fakeSecret)
	t.Setenv("AWS_SESSION_TOKEN", fakeToken)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("BEDROCK_MODEL_ID", "")
	t.Setenv("XDG_STATE_HOME", "") // the chat's history goes under HOME, unless CONVERSE_HISTORY
}

// runInProcess calls run with the environment of setTestEnv, and returns
// what it printed and the exit status main would give.
func runInProcess(t *testing.T, stdin io.Reader, args ...string) outcome {
	t.Helper()
	setTestEnv(t)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, stdin, &stdout, &stderr)
	code := report(&stderr, err)
	return outcome{stdout.String(), stderr.String(), code}
}

// newServer starts a bedrocktest server for the test.
func newServer(t *testing.T, h bedrocktest.Handler) *bedrocktest.Server {
	t.Helper()
	srv := bedrocktest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// toolResults returns the toolResult blocks of the last message of a
// request, by toolUseId.
func toolResults(t *testing.T, req *bedrocktest.Request) map[string]types.ToolResultBlock {
	t.Helper()
	out := map[string]types.ToolResultBlock{}
	last := req.Messages[len(req.Messages)-1]
	for _, b := range last.Content {
		if r, ok := b.(*types.ContentBlockMemberToolResult); ok {
			out[*r.Value.ToolUseId] = r.Value
		}
	}
	return out
}

// resultText is the text of a toolResult.
func resultText(r types.ToolResultBlock) string {
	var s strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*types.ToolResultContentBlockMemberText); ok {
			s.WriteString(t.Value)
		}
	}
	return s.String()
}

// mustContain fails unless s holds each of wants.
func mustContain(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		assert.Contains(t, s, w, what)
	}
}

// pidPipe makes a named pipe in a directory of the test's own, for a helper
// tool ("mark-hang", "spawn") to write its pid to. It opens it for reading and
// writing, so the pipe waits for no writer, and a read waits for the tool's
// line. The pipe is closed at the test's end.
func pidPipe(t *testing.T) (path string, pipe *os.File) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "pid")
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	pipe, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	t.Cleanup(func() { pipe.Close() })
	return path, pipe
}

// TestUnknownModelFamily: a -model of no family converse knows runs, with
// one warning line on standard error, the ID escaped, saying which
// defaults apply; a known one gets none.
func TestUnknownModelFamily(t *testing.T) {
	t.Parallel()
	for model, want := range map[string]string{
		"acme.robot-1":              "converse: warning: model acme.robot-1 is of no family converse knows",
		"acme.robot-\x1b[31m1":      `converse: warning: model "acme.robot-\x1b[31m1" is of no family converse knows`,
		"us.amazon.nova-pro-v1:0":   "",
		"meta.llama3-3-70b-v1:0":    "",
		"anthropic.claude-opus-9-0": "",
	} {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, bedrocktest.Script(bedrocktest.Text("Hello.")))
			out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-model", model, "hi")
			require.Equal(t, 0, out.code, out.stderr)
			assert.Equal(t, "Hello.\n", out.stdout)
			if want == "" {
				assert.NotContains(t, out.stderr, "warning")
				return
			}
			assert.Equal(t, 1, strings.Count(out.stderr, "warning"), out.stderr)
			assert.Contains(t, out.stderr, want+" (Anthropic, Amazon, Meta, Mistral, Cohere, DeepSeek, Writer): ")
			assert.Contains(t, out.stderr, "defaults apply")
		})
	}
}
