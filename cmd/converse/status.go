package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/term"
	"golang.org/x/text/width"

	"github.com/tooluse/bedrock/converse"
)

// statusEvery is how often the status line is redrawn, at most.
const statusEvery = 250 * time.Millisecond

// status is the live status line at the terminal, on standard error while
// a Send or Resume runs: the turn, how long the model call has taken, the
// tools running and for how long, redrawn in place. The printer feeds it
// converse's events; a ticker redraws it. It is erased before the model's
// text prints and while the approval prompt asks, and at the end of the
// run. A nil *status shows nothing: stderr is no terminal, or -v, -json or
// TERM=dumb (or unset) is.
type status struct {
	w  io.Writer // the terminal, as it is: the line is converse's own
	fd int       // the terminal's file descriptor, -1 when w is none

	mu      sync.Mutex
	width   int    // the terminal's columns, read again on SIGWINCH; the line never wraps
	resized func() // for tests: called after each resize is read

	stopResize func() // ends the watch of SIGWINCH that begin started
	turn       int
	model      time.Time // when the model call began; zero while tools run or text prints
	tools      []runningTool
	hidden     bool   // the model's text or the approval prompt is on the line
	drawn      string // what is on the line now
	stop       chan struct{}
	stopped    chan struct{}
}

type runningTool struct {
	id, name string
	since    time.Time
	progress string // what its MCP server last said of it
}

// newStatus returns the status line for stderr on a terminal of type
// termType ($TERM), or nil when there is none.
func newStatus(stderr io.Writer, s *settings, termType string) *status {
	if s.verbose || s.json || termType == "" || termType == "dumb" || !isTerminal(stderr) {
		return nil
	}
	st := &status{w: stderr, fd: int(stderr.(interface{ Fd() uintptr }).Fd())}
	st.width = st.columns()
	return st
}

// columns is the width of the terminal, 80 when it is not known.
func (st *status) columns() int {
	width, _, err := term.GetSize(st.fd)
	if st.fd < 0 || err != nil || width < 20 {
		return 80
	}
	return width
}

// resize reads the terminal's width again, as it changed.
func (st *status) resize() {
	width := st.columns()
	st.mu.Lock()
	st.width = width
	resized := st.resized
	st.mu.Unlock()
	if resized != nil {
		resized()
	}
}

// begin shows the line from the first model call of a Send or Resume on,
// until end.
func (st *status) begin() {
	if st == nil {
		return
	}
	st.mu.Lock()
	st.turn, st.model, st.tools, st.hidden = 1, time.Now(), nil, false
	st.stop, st.stopped = make(chan struct{}), make(chan struct{})
	st.mu.Unlock()
	st.stopResize = onResize(st.resize)
	go st.tick(st.stop, st.stopped)
}

func (st *status) tick(stop <-chan struct{}, stopped chan<- struct{}) {
	defer close(stopped)
	t := time.NewTicker(statusEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			st.mu.Lock()
			st.draw(st.line(now))
			st.mu.Unlock()
		}
	}
}

// end stops the ticker and erases the line.
func (st *status) end() {
	if st == nil || st.stop == nil {
		return
	}
	st.stopResize()
	close(st.stop)
	<-st.stopped
	st.stop = nil
	st.mu.Lock()
	st.draw("")
	st.mu.Unlock()
}

// event follows the conversation: a model call runs from the start and
// from the end of the tools' round to its text or its end; the text and
// the approval prompt hide the line.
func (st *status) event(ev converse.Event) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	now := time.Now()
	switch e := ev.(type) {
	case converse.Text:
		if e.Text != "" {
			st.hidden = true
			st.draw("") // before the text prints
		}
	case converse.ModelRetry: // the call is made again: its text, if any, is left behind
		st.turn, st.model, st.hidden = e.Turn, now, false
	case converse.ApprovalRequested:
		st.hidden = true
		st.draw("")
	case converse.ApprovalDecided:
		st.hidden = false
	case converse.TurnEnd:
		st.turn, st.model, st.hidden = e.Turn, time.Time{}, false
		st.draw("")
	case converse.ToolStart:
		st.turn = e.Turn
		st.tools = append(st.tools, runningTool{id: e.ID, name: e.Name, since: now})
	case converse.ToolEnd:
		for i, t := range st.tools {
			if t.id == e.ID {
				st.tools = append(st.tools[:i], st.tools[i+1:]...)
				break
			}
		}
		if len(st.tools) == 0 {
			st.turn, st.model = e.Turn+1, now
		}
	}
}

// say writes line, one of converse's own, to w (standard error) in
// place of the status line, which the next tick draws again below it.
func (st *status) say(w io.Writer, line string) {
	if st == nil {
		io.WriteString(w, line)
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.draw("")
	io.WriteString(w, line)
}

// progress notes what an MCP server said of the running call id.
func (st *status) progress(id, what string) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for i := range st.tools {
		if st.tools[i].id == id {
			st.tools[i].progress = what
		}
	}
}

// line is the status at now: "converse: turn 2 · model call 3s" or
// "converse: turn 1 · running fetch 4s, search 1s"; empty when hidden or
// when nothing runs.
func (st *status) line(now time.Time) string {
	if st.hidden {
		return ""
	}
	var b strings.Builder
	switch {
	case len(st.tools) > 0:
		fmt.Fprintf(&b, "converse: turn %d · running", st.turn)
		for i, t := range st.tools {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, " %s %s", visible(t.name), seconds(now.Sub(t.since)))
			if t.progress != "" {
				fmt.Fprintf(&b, " (%s)", t.progress)
			}
		}
	case !st.model.IsZero():
		fmt.Fprintf(&b, "converse: turn %d · model call %s", st.turn, seconds(now.Sub(st.model)))
	default:
		return ""
	}
	return fit(b.String(), st.width)
}

// fit is line cut to less than cols cells of the terminal, with "…"
// where it was cut: a double-width character (CJK) takes two cells, a
// combining mark none.
func fit(line string, cols int) string {
	if cells(line) < cols {
		return line
	}
	var b strings.Builder
	used := 0
	for _, r := range line {
		c := runeCells(r)
		if used+c > cols-2 {
			break
		}
		b.WriteRune(r)
		used += c
	}
	b.WriteRune('…')
	return b.String()
}

// cells is how many cells of the terminal s takes.
func cells(s string) int {
	n := 0
	for _, r := range s {
		n += runeCells(r)
	}
	return n
}

func runeCells(r rune) int {
	switch {
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf) || r == 0x200b:
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// draw puts line in place of the one drawn, if it differs: back to the
// line's start and clear it, then line.
func (st *status) draw(line string) {
	if line == st.drawn {
		return
	}
	io.WriteString(st.w, "\r\x1b[K"+line)
	st.drawn = line
}

// seconds is d in whole seconds, as the line shows it.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%ds", int(d/time.Second))
}
