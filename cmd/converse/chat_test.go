package main

import (
	"context"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// terminal is standard input on a terminal for an in-process run: its
// lines come from a reader, and its file descriptor is that of a real
// pseudo-terminal, for term.IsTerminal.
type terminal struct {
	io.Reader
	tty *os.File
}

func (t terminal) Fd() uintptr { return t.tty.Fd() }

func newTerminal(t *testing.T, r io.Reader) terminal {
	tty, _ := openTerminal(t)
	return terminal{r, tty}
}

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
	in := newTerminal(t, strings.NewReader("I'm Ann.\n\n  \nAm I?\nWhat is my name?\n"))
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
	err := run(ctx, []string{"-endpoint", srv.URL}, newTerminal(t, r), &stdout, &stderr)
	if code := report(&stderr, err); code != exitInterrupted || !strings.Contains(stderr.String(), "converse: interrupted") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr.String())
	}
}

// TestChatOnTerminal runs the binary on a terminal: it chats, one message
// a line, until Ctrl-D.
func TestChatOnTerminal(t *testing.T) {
	t.Parallel()
	tty, keyboard := openTerminal(t)
	if _, err := keyboard.WriteString("What is 6 times 7?\n\x04"); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, multiply())
	out := runBinary(t, testEnv(t), tty, "-endpoint", srv.URL)
	if want := "Let me work that out.\n6 × 7 = 42.\n"; out.code != 0 || out.stdout != want {
		t.Errorf("exit %d, stdout %q, want %q; stderr:\n%s", out.code, out.stdout, want, out.stderr)
	}
	mustContain(t, "stderr", out.stderr, "Chatting with ")
}

// TestNoPromptNoTerminal: standard input that is no terminal and holds no
// prompt, such as /dev/null, a character device, is a usage error, not an
// empty chat.
func TestNoPromptNoTerminal(t *testing.T) {
	t.Parallel()
	srv := newServer(t, bedrocktest.Script())
	out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL)
	if out.code != 2 || out.stdout != "" {
		t.Errorf("exit %d, stdout %q, want exit 2", out.code, out.stdout)
	}
	mustContain(t, "stderr", out.stderr, "converse: no prompt")
	if len(srv.Requests()) != 0 {
		t.Error("a model call was made")
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(f) || isTerminal(null) || isTerminal(strings.NewReader("")) {
		t.Error("a file, /dev/null or a string is a terminal")
	}
	tty, _ := openTerminal(t)
	if !isTerminal(tty) {
		t.Error("a terminal is not a terminal")
	}
}
