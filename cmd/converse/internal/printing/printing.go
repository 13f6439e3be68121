// Package printing shows a conversation as converse prints it: the
// assistant's text on standard output, turn by turn, and with -v the trace
// of converse/trace. The converse command and the program of make demo
// (cmd/converse/internal/demo) share it, so the demo prints what
// converse -replay -v does.
package printing

import (
	"fmt"
	"io"
	"strings"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/citation"
	"github.com/tooluse/bedrock/converse/trace"
)

// Printer prints a conversation as it happens. Its Event method is
// converse.Options.OnEvent, which is never called concurrently.
type Printer struct {
	Stdout io.Writer    // where the assistant's text goes
	NoText bool         // print no text: with -json, Stdout holds the JSON object only
	Trace  *trace.Trace // the -v trace, else nil
	// midLine is set when text was written without its final newline.
	midLine bool
}

// Event prints ev: a text's words on Stdout, and ev in the trace.
func (p *Printer) Event(ev converse.Event) {
	switch e := ev.(type) {
	case converse.Text:
		if p.NoText || e.Text == "" {
			break
		}
		io.WriteString(p.Stdout, e.Text)
		p.midLine = !strings.HasSuffix(e.Text, "\n")
	case converse.TurnEnd:
		p.EndText()
	}
	if p.Trace != nil {
		p.Trace.Event(ev)
	}
}

// EndText ends a line of assistant text, so that what follows, on Stdout
// or in the trace, starts on a line of its own.
func (p *Printer) EndText() {
	if p.midLine {
		io.WriteString(p.Stdout, "\n")
		p.midLine = false
	}
}

// Citations lists the sources of an answer after it, one line each, such
// as "[1] Annual report, page 3". With NoText they are in the JSON object
// instead.
func (p *Printer) Citations(cits []citation.Citation) {
	if p.NoText {
		return
	}
	for i, c := range cits {
		fmt.Fprintf(p.Stdout, "[%d] %s\n", i+1, trace.Printable(c.String()))
	}
}

// Total traces what a Send or Resume used.
func (p *Printer) Total(res *converse.Result) {
	if p.Trace != nil {
		p.Trace.Result(res)
	}
}

// Tracef writes a line of converse's own to the trace.
func (p *Printer) Tracef(format string, args ...any) {
	if p.Trace != nil {
		p.Trace.Printf(format, args...)
	}
}

// Replaying traces that model's calls are answered offline from the
// recording file.
func (p *Printer) Replaying(model, file string) {
	p.Tracef("· model %s, replaying %s offline\n", trace.Printable(model), file)
}

// Prompt traces the prompt sent, shortened to a line.
func (p *Printer) Prompt(prompt string) {
	p.Tracef("> %s\n", trace.Short(prompt))
}
