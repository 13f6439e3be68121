package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/cmd/converse/internal/printing"
	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/converse/trace"
	"github.com/tooluse/bedrock/converse/wirejson"
	"github.com/tooluse/bedrock/tools/mcptools"
)

// printer is how converse prints a conversation (printing.Printer), with
// the status line at the terminal, and diagnostics on stderr.
type printer struct {
	printing.Printer
	stderr io.Writer
	status *status // the live status line at the terminal, else nil
}

// event is printing.Printer.Event after the status line saw ev: it is
// erased before the text prints. A model call made again or hedged gets a
// line on stderr (in the trace with -v), and the text it had printed is
// marked superseded.
func (p *printer) event(ev converse.Event) {
	if r, ok := ev.(converse.ModelRetry); ok && r.Superseded != "" && !p.NoText {
		// On the line after the text, before the status line shows again.
		p.EndText()
		io.WriteString(p.Stdout, supersededLine)
	}
	if _, text := ev.(converse.Text); !text || !p.NoText {
		p.status.event(ev)
	}
	p.Event(ev)
	line, ok := callLine(ev)
	switch {
	case !ok:
	case p.Trace != nil:
		p.Tracef("· %s\n", line)
	default:
		p.status.say(p.stderr, "converse: "+line+"\n")
	}
}

// supersededLine follows the text of a model call made again, which the
// new call's text replaces. Text printed cannot be taken back from a file
// or a pipe; with -json none was printed.
const supersededLine = "[the text above is superseded; the model is asked again]\n"

// callLine is the line of a model call made again (converse.ModelRetry)
// or hedged (converse.Hedged), such as "turn 1: model stalled (no first
// token for 30s); retry 1 in 150ms"; ok is false for another event.
func callLine(ev converse.Event) (line string, ok bool) {
	switch e := ev.(type) {
	case converse.ModelRetry:
		return fmt.Sprintf("turn %d: %s; retry %d in %v", e.Turn, failedCall(e.Err), e.Retry, e.Wait.Round(time.Millisecond)), true
	case converse.Hedged:
		return fmt.Sprintf("turn %d: no first token after %v; a second request was sent", e.Turn, e.After.Round(time.Millisecond)), true
	}
	return "", false
}

// failedCall says why a model call is made again: "model stalled (no
// first token for 30s)", or "stream cut (...)" with the transport's
// error.
func failedCall(err error) string {
	if errors.Is(err, converse.ErrStalled) {
		return "model stalled (" + strings.TrimPrefix(err.Error(), converse.ErrStalled.Error()+": ") + ")"
	}
	return "stream cut (" + trace.Short(retryReason(err)) + ")"
}

// traceEvent is tr.Event with the lines of callLine, which package trace
// does not write: the OnEvent of serve's -v.
func traceEvent(tr *trace.Trace) func(converse.Event) {
	return func(ev converse.Event) {
		tr.Event(ev)
		if line, ok := callLine(ev); ok {
			tr.Printf("· %s\n", line)
		}
	}
}

// warnStop tells on stderr why an answer that did not fail ended early.
func (p *printer) warnStop(stop types.StopReason, maxTokens int) {
	switch stop {
	case types.StopReasonMaxTokens:
		fmt.Fprintf(p.stderr, "converse: the answer was cut off at the output token limit (max_tokens); raise -max-tokens (now %s)\n", tokens(maxTokens))
	case types.StopReasonGuardrailIntervened:
		fmt.Fprintln(p.stderr, "converse: a guardrail stopped the answer (guardrail_intervened)")
	case types.StopReasonContentFiltered:
		fmt.Fprintln(p.stderr, "converse: the content filter stopped the answer (content_filtered)")
	}
}

// jsonResult is what -json prints for each prompt.
type jsonResult struct {
	Model      string          `json:"model"`
	Text       string          `json:"text"`
	StopReason string          `json:"stopReason,omitempty"`
	Turns      int             `json:"turns"`
	Usage      jsonUsage       `json:"usage"`
	CostUSD    *float64        `json:"costUSD,omitempty"` // rounded by roundUSD; absent when the model's prices are unknown
	Citations  []jsonCitation  `json:"citations,omitempty"`
	Structured json.RawMessage `json:"structured,omitempty"` // -schema: the validated answer
	History    json.RawMessage `json:"history"`              // Bedrock's wire JSON of the messages
	Error      string          `json:"error,omitempty"`
}

// jsonUsage has the field names of Bedrock's TokenUsage.
type jsonUsage struct {
	InputTokens           int `json:"inputTokens"`
	OutputTokens          int `json:"outputTokens"`
	TotalTokens           int `json:"totalTokens"`
	CacheReadInputTokens  int `json:"cacheReadInputTokens,omitempty"`
	CacheWriteInputTokens int `json:"cacheWriteInputTokens,omitempty"`
}

// jsonCitation is a citation.Citation in -json.
type jsonCitation struct {
	Text   string   `json:"text"`
	Title  string   `json:"title,omitempty"`
	Source string   `json:"source,omitempty"`
	Kind   string   `json:"kind,omitempty"` // page, char, chunk, searchResult or web
	Index  int      `json:"index"`          // the document's or search result's
	Start  int      `json:"start"`
	End    int      `json:"end"`
	URL    string   `json:"url,omitempty"`
	Domain string   `json:"domain,omitempty"`
	Quotes []string `json:"quotes,omitempty"`
}

// writeJSON prints the result of one prompt, with its structured answer
// (-schema) if any, which may have failed with failed: then res, if not
// nil, holds what was done.
func writeJSON(w io.Writer, model string, res *converse.Result, structured json.RawMessage, failed error) error {
	out := jsonResult{Model: model, History: json.RawMessage("[]"), Structured: structured}
	if res != nil {
		history, err := wirejson.MarshalMessages(res.History)
		if err != nil {
			return fmt.Errorf("-json: %w", err)
		}
		u := res.Usage
		out.Text, out.StopReason, out.Turns, out.History, out.CostUSD = res.Text, string(res.StopReason), res.Turns, history, roundUSD(res.CostUSD)
		out.Usage = jsonUsage{u.InputTokens, u.OutputTokens, u.TotalTokens, u.CacheReadInputTokens, u.CacheWriteInputTokens}
		for _, c := range res.Citations {
			l := c.Location
			out.Citations = append(out.Citations, jsonCitation{c.Text, c.Title, c.Source, string(c.Kind), l.Index, l.Start, l.End, l.URL, l.Domain, c.Quotes})
		}
	}
	if failed != nil {
		out.Error = recording.Redact(failed.Error())
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// roundUSD rounds a cost to the microdollar, 6 decimal places: a sum of
// prices times tokens has float noise no one can bill.
func roundUSD(usd *float64) *float64 {
	if usd == nil {
		return nil
	}
	r := math.Round(*usd*1e6) / 1e6
	return &r
}

// redacting is standard error as converse writes to it: whatever goes
// through it, the -v trace, the SDK's and the library's log lines, loses
// the AWS credentials and signatures recording.Redact finds, as an AWS
// error body can echo them. Each Write is redacted on its own; every line
// converse writes is one Write.
type redacting struct{ w io.Writer }

func (r redacting) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, recording.Redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// plural is n things, such as "1 message" or "2 messages".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// progress shows an MCP server's progress notification: on the status
// line, and with -v as a trace line. The server's words are untrusted:
// one line, capped, printable.
func (p *printer) progress(n mcptools.Progress) {
	what := trace.Short(n.Message)
	if n.Total > 0 {
		what = strings.TrimSpace(fmt.Sprintf("%g/%g %s", n.Progress, n.Total, what))
	}
	p.status.progress(n.CallID, what)
	p.Tracef("· %s: %s\n", trace.Printable(n.Server+"__"+n.Tool), what)
}
