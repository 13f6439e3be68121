package main

import (
	"context"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// terminal is standard input as a terminal: a character device.
type terminal struct{ io.Reader }

func (terminal) Stat() (os.FileInfo, error) { return terminalInfo{}, nil }

type terminalInfo struct{ os.FileInfo }

func (terminalInfo) Mode() fs.FileMode { return fs.ModeDevice | fs.ModeCharDevice | 0o620 }

func TestChat(t *testing.T) {
	var calls atomic.Int32
	srv := newServer(t, bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		switch calls.Add(1) {
		case 1:
			return bedrocktest.Text("Hello, Ann."), nil
		case 2:
			return nil, bedrocktest.AccessDenied("not now")
		}
		return bedrocktest.Text("Your name is Ann."), nil
	}))
	in := terminal{strings.NewReader("I'm Ann.\n\n  \nAm I?\nWhat is my name?\n")}
	out := runInProcess(t, in, "-endpoint", srv.URL)
	if out.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", out.code, out.stderr)
	}
	if want := "Hello, Ann.\nYour name is Ann.\n"; out.stdout != want {
		t.Errorf("stdout = %q, want %q", out.stdout, want)
	}
	mustContain(t, "stderr", out.stderr, "Chatting with "+defaultModel, "Ctrl-D", "> ", "converse: access denied")
	if n := strings.Count(out.stderr, "> "); n != 6 {
		t.Errorf("%d prompts, want 6 (one per line, one at the end):\n%s", n, out.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	// The history goes on from the first answer; the failed message is not
	// part of it.
	var texts []string
	for _, m := range reqs[2].Messages {
		texts = append(texts, string(m.Role)+": "+m.Content[0].(*types.ContentBlockMemberText).Value)
	}
	if got, want := strings.Join(texts, " | "), "user: I'm Ann. | assistant: Hello, Ann. | user: What is my name?"; got != want {
		t.Errorf("history = %s, want %s", got, want)
	}
}

// TestChatInterrupt: an interruption ends a chat that waits for a line.
func TestChatInterrupt(t *testing.T) {
	setTestEnv(t)
	srv := newServer(t, bedrocktest.Script())
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel) // Ctrl-C
	var stdout, stderr strings.Builder
	err := run(ctx, []string{"-endpoint", srv.URL}, terminal{r}, &stdout, &stderr)
	if code := report(&stderr, err); code != 1 || !strings.Contains(stderr.String(), "converse: interrupted") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr.String())
	}
}

// TestChatOnTerminal runs the binary with /dev/null, a character device,
// as standard input: it chats, and ends at once.
func TestChatOnTerminal(t *testing.T) {
	t.Parallel()
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Skip(os.DevNull, "is not a character device here")
	}
	srv := newServer(t, bedrocktest.Script())
	out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL)
	if out.code != 0 || out.stdout != "" {
		t.Errorf("exit %d, stdout %q", out.code, out.stdout)
	}
	mustContain(t, "stderr", out.stderr, "Chatting with ")
}

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) || isTerminal(strings.NewReader("")) {
		t.Error("a file or a string is a terminal")
	}
	if !isTerminal(terminal{}) {
		t.Error("a character device is not a terminal")
	}
}
