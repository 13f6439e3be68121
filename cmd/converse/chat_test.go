package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, "Hello, Ann.\nYour name is Ann.\n", out.stdout)
	mustContain(t, "stderr", out.stderr, "Chatting with "+defaultModel, "Ctrl-D", "> ", "converse: access denied")
	assert.Equal(t, 6, strings.Count(out.stderr, "> "), "one prompt per line, one at the end:\n%s", out.stderr)
	reqs := srv.Requests()
	require.Len(t, reqs, 3, "model calls")
	// The history goes on from the first answer; the failed message is not
	// part of it.
	var texts []string
	for _, m := range reqs[2].Messages {
		texts = append(texts, string(m.Role)+": "+m.Content[0].(*types.ContentBlockMemberText).Value)
	}
	assert.Equal(t, "user: I'm Ann. | assistant: Hello, Ann. | user: What is my name?", strings.Join(texts, " | "))
}

// TestChatInterrupt: an interruption ends a chat that waits for a line.
func TestChatInterrupt(t *testing.T) {
	setTestEnv(t)
	srv := newServer(t, bedrocktest.Script())
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &interruptAtPrompt{cancel: cancel}
	var stdout strings.Builder
	err := run(ctx, []string{"-endpoint", srv.URL}, newTerminal(t, r), &stdout, stderr)
	assert.Equal(t, exitInterrupted, report(stderr, err), stderr.String())
	assert.Contains(t, stderr.String(), "> \r\nconverse: interrupted\n", "the report on a line of its own")
}

// interruptAtPrompt is standard error that presses Ctrl-C (cancel) once
// the chat shows its prompt, where it waits for a line. It has no
// WriteString, which io.WriteString would call instead of Write.
type interruptAtPrompt struct {
	text   strings.Builder
	cancel context.CancelFunc
}

func (w *interruptAtPrompt) Write(p []byte) (int, error) {
	n, err := w.text.Write(p)
	if strings.Contains(w.text.String(), "> ") {
		w.cancel()
	}
	return n, err
}

func (w *interruptAtPrompt) String() string { return w.text.String() }

// TestChatOnTerminal runs the binary on a terminal: it chats, one message
// a line, until Ctrl-D.
func TestChatOnTerminal(t *testing.T) {
	t.Parallel()
	tty, keyboard := openTerminal(t)
	_, err := keyboard.WriteString("What is 6 times 7?\n") // typed ahead: the chat reads it at its prompt
	require.NoError(t, err)
	srv := newServer(t, multiply())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, testEnv(t), "-endpoint", srv.URL)
	var stdout bytes.Buffer
	stderr := newWatched()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, stderr
	require.NoError(t, cmd.Start())
	stderr.waitFor(t, "> ", 2) // the answer is in: Ctrl-D at the next prompt
	_, err = keyboard.WriteString("\x04")
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), stderr.String())
	checkRace(t, 0, stderr.String())
	assert.Equal(t, "Let me work that out.\n6 × 7 = 42.\n", stdout.String())
	mustContain(t, "stderr", stderr.String(), "Chatting with ")
}

// watched is output a test waits on, such as a chat's prompts: each Write
// wakes the waiters.
type watched struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func newWatched() *watched { return &watched{changed: make(chan struct{})} }

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.changed)
	w.changed = make(chan struct{})
	return w.b.Write(p)
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// waitFor returns once the output holds s n times. A minute is a
// failsafe, not a margin: the output is there as soon as converse wrote
// it.
func (w *watched) waitFor(t *testing.T, s string, n int) {
	t.Helper()
	failsafe := time.After(time.Minute)
	for {
		w.mu.Lock()
		got, changed := strings.Count(w.b.String(), s), w.changed
		w.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-changed:
		case <-failsafe:
			require.FailNow(t, "waiting for the output", "%d of %q in:\n%s", n, s, w.String())
		}
	}
}

// TestNoPromptNoTerminal: standard input that is no terminal and holds no
// prompt, such as /dev/null, a character device, is a usage error, not an
// empty chat.
func TestNoPromptNoTerminal(t *testing.T) {
	t.Parallel()
	srv := newServer(t, bedrocktest.Script())
	out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL)
	assert.Equal(t, 2, out.code, out.stderr)
	assert.Empty(t, out.stdout)
	mustContain(t, "stderr", out.stderr, "converse: no prompt")
	assert.Empty(t, srv.Requests(), "model calls")
}

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stdin")
	require.NoError(t, err)
	defer f.Close()
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	assert.False(t, isTerminal(f), "a file")
	assert.False(t, isTerminal(null), "/dev/null")
	assert.False(t, isTerminal(strings.NewReader("")), "a string")
	tty, _ := openTerminal(t)
	assert.True(t, isTerminal(tty), "a terminal")
}
