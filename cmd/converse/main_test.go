package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// binary is the converse command, built by TestMain for the end-to-end
// tests; helperArg makes the test binary act as a tool (see helperTool).
var binary string

const helperArg = "helper-tool"

// Fake credentials: tests check that none of them reaches a recording.
const (
	fakeKeyID  = "AKIACONVERSETESTKEY1"
	fakeSecret = "converse/test/secret/aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"
	fakeToken  = "FwoGZXIvYXdzConverseTestSessionToken0123456789"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == helperArg {
		os.Exit(helperTool(os.Args[2], os.Args[3:]))
	}
	dir, err := os.MkdirTemp("", "converse-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "converse")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building converse:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
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
	case "fail":
		fmt.Fprintln(os.Stderr, "something broke")
		return 3
	case "hang":
		time.Sleep(time.Hour)
	case "spawn": // starts a child that hangs, writes both pids to args[0], and hangs
		child := exec.Command(os.Args[0], helperArg, "hang")
		if err := child.Start(); err != nil {
			return 1
		}
		pids := fmt.Sprintf("%d %d", os.Getpid(), child.Process.Pid)
		if err := os.WriteFile(args[0]+".tmp", []byte(pids), 0o644); err != nil || os.Rename(args[0]+".tmp", args[0]) != nil {
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
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("running converse: %v", err)
		}
		code = ee.ExitCode()
	}
	return outcome{stdout.String(), stderr.String(), code}
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
		if !strings.Contains(s, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, s)
		}
	}
}
