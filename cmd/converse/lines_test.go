package main

import (
	"context"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLineEditorWidth: the chat's line editor wraps a long line where the
// terminal does, at its width when the chat starts and at its new width
// after a resize (SIGWINCH), not at 80 columns.
func TestLineEditorWidth(t *testing.T) {
	tty, _ := openTerminal(t)
	setSize(t, tty, 50, 24)
	keyboard, typist := io.Pipe()
	defer typist.Close()
	screen := newWatched()
	r := newLineReader(int(tty.Fd()), keyboard, screen, &history{})
	defer r.close()
	long := strings.Repeat("0123456789", 7)
	typeLine := func(prompt string) {
		t.Helper()
		go io.WriteString(typist, long+"\r")
		line, err := r.readLine(context.Background(), prompt)
		require.NoError(t, err)
		assert.Equal(t, long, line)
	}

	typeLine("> ")
	assert.Contains(t, screen.String(), "> "+long[:48]+"\r\n"+long[48:], "wrapped at 50 columns, the prompt included")

	setSize(t, tty, 30, 24)
	resized := make(chan struct{}, 1)
	r.mu.Lock()
	r.resized = func() {
		select {
		case resized <- struct{}{}:
		default:
		}
	}
	r.mu.Unlock()
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGWINCH))
	<-resized
	typeLine(">> ")
	_, after, _ := strings.Cut(screen.String(), ">> ")
	assert.Contains(t, after, long[:27]+"\r\n"+long[27:57]+"\r\n"+long[57:], "wrapped at 30 columns after the resize")
}
