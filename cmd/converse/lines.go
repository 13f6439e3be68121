package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/term"
)

// The keys that end a read of the line editor, which takes either for the
// end of the input.
const (
	keyCtrlC = 3
	keyCtrlD = 4
)

// maxHistory bounds the lines of the history file read at the start.
const maxHistory = 1000

// errCtrlC is a Ctrl-C at a prompt of the line editor.
var errCtrlC = errors.New("ctrl-c")

// lineReader reads the chat's lines at the terminal with golang.org/x/term's
// line editor (arrow keys, Home/End, Alt-Left/Right, Ctrl-W, Ctrl-U, Up and
// Down through the history), the terminal in raw mode only while a line is
// read, so that a Ctrl-C during a turn is the interrupt the chat takes. A
// pasted block of lines (bracketed paste) is one message. The chat and the
// approval prompt share it: a second reader of the terminal would take
// lines typed for the other.
type lineReader struct {
	fd      int
	keys    *keys
	out     *gate // the terminal's output, not made visible: the editor moves the cursor
	history *history
	ed      *term.Terminal

	mu      sync.Mutex
	reading chan lineResult // a read in progress whose caller went away, if not nil
}

type lineResult struct {
	line string
	err  error // io.EOF (Ctrl-D or the end of the input), errCtrlC, or a failure
}

func newLineReader(fd int, in io.Reader, out io.Writer, h *history) *lineReader {
	r := &lineReader{fd: fd, keys: &keys{r: bufio.NewReader(in)}, out: &gate{w: out}, history: h}
	r.ed = r.editor()
	return r
}

func (r *lineReader) editor() *term.Terminal {
	ed := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{r.keys, r.out}, "")
	ed.History = r.history
	return ed
}

// readLine shows prompt and returns the line typed, or a pasted block of
// lines whole. It returns io.EOF for a Ctrl-D on an empty line or the end
// of the input, errCtrlC for a Ctrl-C, and ctx's error if ctx ends first;
// the read then goes on, and the next readLine gets its line.
func (r *lineReader) readLine(ctx context.Context, prompt string) (string, error) {
	r.mu.Lock()
	done := r.reading
	if done == nil {
		done = make(chan lineResult, 1)
		go func() { done <- r.read(prompt) }()
	}
	r.reading = nil
	r.mu.Unlock()
	select {
	case res := <-done:
		return res.line, res.err
	case <-ctx.Done():
		r.mu.Lock()
		r.reading = done
		r.mu.Unlock()
		return "", ctx.Err()
	}
}

// close ends the reader's output: a read still in progress when the chat
// ends writes nothing more.
func (r *lineReader) close() { r.out.close() }

// gate is a writer that can be closed: it drops what is written after.
type gate struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (g *gate) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return len(p), nil
	}
	return g.w.Write(p)
}

func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
}

// read reads a line in raw mode, a pasted block whole: its lines, up to
// the first line typed after it, which ends the message.
func (r *lineReader) read(prompt string) lineResult {
	if state, err := term.MakeRaw(r.fd); err == nil {
		defer term.Restore(r.fd, state)
	}
	r.ed.SetBracketedPasteMode(true)
	defer r.ed.SetBracketedPasteMode(false)
	r.ed.SetPrompt(prompt)
	var block []string
	for {
		line, err := r.ed.ReadLine()
		if errors.Is(err, term.ErrPasteIndicator) {
			block = append(block, line)
			r.ed.SetPrompt("")
			continue
		}
		if err != nil {
			// The editor keeps what was typed before a Ctrl-C; a new
			// prompt starts afresh.
			r.ed = r.editor()
			io.WriteString(r.out, "\r\n")
			if errors.Is(err, io.EOF) && r.keys.last == keyCtrlC {
				err = errCtrlC
			}
			return lineResult{err: err}
		}
		return lineResult{line: strings.Join(append(block, line), "\n")}
	}
}

// keys is the terminal's input as the line editor reads it: each read ends
// at a Ctrl-C or a Ctrl-D (a typed-ahead one too), which the editor takes
// for the end of the input and drops what follows in the read, so that the
// chat can tell which it was and no key typed after it is lost.
type keys struct {
	r    *bufio.Reader
	last byte // the last byte read
}

func (k *keys) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if _, err := k.r.Peek(1); err != nil {
		return 0, err
	}
	b, _ := k.r.Peek(min(len(p), k.r.Buffered()))
	n := len(b)
	if i := bytes.IndexAny(b, "\x00\x03\x04"); i >= 0 {
		n = i + 1
	}
	n, err := k.r.Read(p[:n])
	if n > 0 && p[n-1] == typedAheadEOF {
		p[n-1] = keyCtrlD
	}
	if n > 0 {
		k.last = p[n-1]
	}
	return n, err
}

// typedAheadEOF is what a Ctrl-D typed before the editor put the terminal
// in raw mode (during a turn, say) becomes: the line discipline took it
// for the end of a line and left a NUL in its place (Linux's
// __DISABLED_CHAR), which the editor reads as a NUL key.
const typedAheadEOF = 0

// history is the line editor's history, kept across runs in a file (one
// line an entry, appended as each line is read), or in memory only when
// path is "".
type history struct {
	path    string
	entries []string // the oldest first
}

// historyPath is where the chat keeps its history: $CONVERSE_HISTORY (off:
// nowhere), else converse/history under $XDG_STATE_HOME, else under
// ~/.local/state.
func historyPath() string {
	switch v := os.Getenv("CONVERSE_HISTORY"); v {
	case "off":
		return ""
	case "":
	default:
		return v
	}
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "converse", "history")
}

// loadHistory reads the last maxHistory entries of the file at path; a
// file that cannot be read is an empty history.
func loadHistory(path string) *history {
	h := &history{path: path}
	if path == "" {
		return h
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return h
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) != "" {
			h.entries = append(h.entries, line)
		}
	}
	h.entries = h.entries[max(0, len(h.entries)-maxHistory):]
	return h
}

// Add keeps entry, unless it is blank or repeats the last, and appends it
// to the file, readable by its owner only: prompts may hold secrets. A
// file that cannot be written keeps the history in memory.
func (h *history) Add(entry string) {
	if strings.TrimSpace(entry) == "" || len(h.entries) > 0 && h.entries[len(h.entries)-1] == entry {
		return
	}
	h.entries = append(h.entries, entry)
	if h.path == "" {
		return
	}
	if os.MkdirAll(filepath.Dir(h.path), 0o700) != nil {
		return
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	f.WriteString(entry + "\n")
}

func (h *history) Len() int { return len(h.entries) }

// At is the idx-th entry, 0 the most recent.
func (h *history) At(idx int) string { return h.entries[len(h.entries)-1-idx] }
