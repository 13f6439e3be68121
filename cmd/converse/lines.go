package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
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
// Down through the history). The terminal is in raw mode only while a line
// is read, so that a Ctrl-C during a turn is the interrupt the chat takes. A
// pasted block of lines (bracketed paste) is one message. The chat and the
// approval prompt share it: a second reader of the terminal would take
// lines typed for the other.
type lineReader struct {
	fd         int
	keys       *keys
	out        *gate // the terminal's output, not made visible: the editor moves the cursor
	history    *history
	stopResize func()

	mu      sync.Mutex
	ed      *term.Terminal
	reading chan lineResult // a read in progress whose caller went away, if not nil
	// width and height are the terminal's, 0 when unknown (the editor
	// then takes 80 columns).
	width, height int
	resized       func() // for tests: called after each resize is applied
}

type lineResult struct {
	line string
	err  error // io.EOF (Ctrl-D or the end of the input), errCtrlC, or a failure
}

func newLineReader(fd int, in io.Reader, out io.Writer, h *history) *lineReader {
	r := &lineReader{fd: fd, keys: &keys{r: bufio.NewReader(in)}, out: &gate{w: out}, history: h}
	r.width, r.height, _ = terminalSize(fd)
	r.ed = r.editor()
	r.stopResize = onResize(r.resize)
	return r
}

// editor is a new line editor, of the terminal's size; r.mu is held.
func (r *lineReader) editor() *term.Terminal {
	ed := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{r.keys, r.out}, "")
	ed.History = recallOnly{r.history} // readLine adds each message whole
	if r.width > 0 {
		ed.SetSize(r.width, r.height)
	}
	return ed
}

// resize gives the editor the terminal's size, which has changed: a line
// longer than the terminal is wide wraps where the terminal wraps it.
func (r *lineReader) resize() {
	width, height, ok := terminalSize(r.fd)
	r.mu.Lock()
	if ok {
		r.width, r.height = width, height
	}
	ed, resized := r.ed, r.resized
	r.mu.Unlock()
	if ok {
		ed.SetSize(width, height)
	}
	if resized != nil {
		resized()
	}
}

// terminalSize is the size of the terminal fd; ok is false when it is not
// known (a pseudo-terminal whose size was never set has 0 columns).
func terminalSize(fd int) (width, height int, ok bool) {
	width, height, err := term.GetSize(fd)
	if err != nil || width <= 0 {
		return 0, 0, false
	}
	return width, height, true
}

// readLine shows prompt and returns the line typed, or a pasted block of
// lines whole, which the history keeps as one entry. It returns io.EOF for
// a Ctrl-D on an empty line or the end of the input, and errCtrlC for a
// Ctrl-C. It returns ctx's error if ctx ends first. The read then goes on,
// and the next readLine (or readAnswer) gets its line.
func (r *lineReader) readLine(ctx context.Context, prompt string) (string, error) {
	line, err := r.readEntry(ctx, prompt)
	if err == nil {
		r.history.Add(line)
	}
	return line, err
}

// readAnswer is readLine for an answer to a question, such as the
// approval prompt's y or n, which the history does not keep.
func (r *lineReader) readAnswer(ctx context.Context, prompt string) (string, error) {
	return r.readEntry(ctx, prompt)
}

func (r *lineReader) readEntry(ctx context.Context, prompt string) (string, error) {
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
func (r *lineReader) close() {
	r.stopResize()
	r.out.close()
}

// endLine ends the line of the prompt, whose read goes on: what is written
// next starts on a line of its own.
func (r *lineReader) endLine() { io.WriteString(r.out, "\r\n") }

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
	r.mu.Lock()
	ed := r.ed
	r.mu.Unlock()
	ed.SetBracketedPasteMode(true)
	defer ed.SetBracketedPasteMode(false)
	ed.SetPrompt(prompt)
	var block []string
	for {
		line, err := ed.ReadLine()
		if errors.Is(err, term.ErrPasteIndicator) {
			block = append(block, line)
			ed.SetPrompt("")
			continue
		}
		if err != nil {
			// The editor keeps what was typed before a Ctrl-C; a new
			// prompt starts afresh.
			r.mu.Lock()
			r.ed = r.editor()
			r.mu.Unlock()
			io.WriteString(r.out, "\r\n")
			if errors.Is(err, io.EOF) && r.keys.last == keyCtrlC {
				err = errCtrlC
			}
			return lineResult{err: err}
		}
		return lineResult{line: strings.Join(append(block, line), "\n")}
	}
}

// keys is the terminal's input as the line editor reads it. Each read ends
// at a Ctrl-C or a Ctrl-D (a typed-ahead one too). The editor takes either
// for the end of the input and drops what follows in the read. Ending the
// read there lets the chat tell which it was, and no key typed after it is
// lost.
type keys struct {
	r    *bufio.Reader
	last byte // the last byte read
}

func (k *keys) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, want := 0, 1
	for {
		_, err := k.r.Peek(want) // waits for a key
		if k.r.Buffered() == 0 {
			return 0, err
		}
		b, _ := k.r.Peek(min(len(p), k.r.Buffered()))
		n = len(b)
		if i := bytes.IndexAny(b, "\x00\x03\x04"); i >= 0 {
			n = i + 1
		}
		// A Home or End key cut at the end of what came so far: up to
		// it now, or, when it is all there is, once the rest has come.
		i := unfinishedKey(b[:n])
		if i > 0 {
			n = i
		}
		if i != 0 || err != nil || n >= len(p) {
			break
		}
		want = n + 1
	}
	n, err := k.r.Read(p[:n])
	n = translateKeys(p[:n])
	if n > 0 && p[n-1] == typedAheadEOF {
		p[n-1] = keyCtrlD
	}
	if n > 0 {
		k.last = p[n-1]
	}
	return n, err
}

// homeEnd are the keys other terminals send for what the line editor
// knows as ESC[H (Home) and ESC[F (End), and the cursor keys of
// application mode (ESC O A ...). Tmux, screen and the Linux console send
// ESC[1~ and ESC[4~ for Home and End, rxvt ESC[7~ and ESC[8~. Unknown to
// the editor, they would do nothing, or insert a letter.
var homeEnd = []struct{ from, to string }{
	{"\x1b[1~", "\x1b[H"}, {"\x1b[7~", "\x1b[H"}, {"\x1bOH", "\x1b[H"},
	{"\x1b[4~", "\x1b[F"}, {"\x1b[8~", "\x1b[F"}, {"\x1bOF", "\x1b[F"},
	{"\x1bOA", "\x1b[A"}, {"\x1bOB", "\x1b[B"}, {"\x1bOC", "\x1b[C"}, {"\x1bOD", "\x1b[D"},
}

// translateKeys rewrites the keys of homeEnd in b, in place, to those the
// editor knows (never longer), and returns the length of what is left.
func translateKeys(b []byte) int {
	if bytes.IndexByte(b, 0x1b) < 0 {
		return len(b)
	}
	w := 0
	for r := 0; r < len(b); {
		matched := false
		if b[r] == 0x1b {
			for _, k := range homeEnd {
				if bytes.HasPrefix(b[r:], []byte(k.from)) {
					w += copy(b[w:], k.to)
					r += len(k.from)
					matched = true
					break
				}
			}
		}
		if !matched {
			b[w] = b[r]
			w++
			r++
		}
	}
	return w
}

// unfinishedKey is the index in b of the start of a key of homeEnd that b
// ends before its end, else -1.
func unfinishedKey(b []byte) int {
	for i := max(0, len(b)-3); i < len(b); i++ {
		if b[i] != 0x1b {
			continue
		}
		for _, k := range homeEnd {
			if len(b)-i < len(k.from) && strings.HasPrefix(k.from, string(b[i:])) {
				return i
			}
		}
	}
	return -1
}

// typedAheadEOF is what a Ctrl-D becomes when typed before the editor put
// the terminal in raw mode (during a turn, say). The line discipline took
// it for the end of a line and left a NUL in its place (Linux's
// __DISABLED_CHAR). The editor reads that NUL as a key.
const typedAheadEOF = 0

// history is the line editor's history, kept across runs in a file, or in
// memory only when path is "". The file holds one line an entry, appended
// as each message is read. An entry of several lines, or one starting with
// a double quote, is written as a Go quoted string.
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
		if strings.HasPrefix(line, `"`) {
			if entry, err := strconv.Unquote(line); err == nil {
				line = entry
			}
		}
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
	if strings.ContainsAny(entry, "\r\n") || strings.HasPrefix(entry, `"`) {
		entry = strconv.Quote(entry)
	}
	f.WriteString(entry + "\n")
}

func (h *history) Len() int { return len(h.entries) }

// recallOnly is the history as the line editor sees it: it recalls the
// entries, but adds none itself, as it would each line of a pasted block
// and each answer to a question.
type recallOnly struct{ *history }

func (recallOnly) Add(string) {}

// At is the idx-th entry, 0 the most recent.
func (h *history) At(idx int) string { return h.entries[len(h.entries)-1-idx] }
