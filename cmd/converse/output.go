package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/recording"
)

// maxShown bounds a tool input or output in a -v trace line, in runes.
const maxShown = 300

// printer shows a conversation as it happens: assistant text on stdout,
// turn by turn, and with -v a trace of turns and tool calls on stderr. Its
// event method is converse.Options.OnEvent, which is never called
// concurrently.
type printer struct {
	stdout, stderr io.Writer
	noText         bool // -json: stdout holds the JSON object only
	verbose        bool
	midLine        bool // text was written without its final newline
	// mu orders the trace's lines: the library logs (see traceHandler)
	// from tools' goroutines too, beside the events.
	mu sync.Mutex
}

func (p *printer) event(ev converse.Event) {
	switch e := ev.(type) {
	case converse.Text:
		if p.noText || e.Text == "" {
			return
		}
		io.WriteString(p.stdout, e.Text)
		p.midLine = !strings.HasSuffix(e.Text, "\n")
	case converse.TurnEnd:
		p.endText()
		p.tracef("· turn %d: %s; tokens %d in, %d out%s%s\n", e.Turn, printable(string(e.StopReason)), e.Usage.InputTokens, e.Usage.OutputTokens, cacheNote(e.Usage), costNote(e.Model, e.Usage))
	case converse.Trimmed:
		p.tracef("· turn %d: %s: %d messages dropped, %d tool results shortened; about %d tokens, now %d\n",
			e.Turn, trimReason(e), e.DroppedMessages, e.ShortenedResults, e.TokensBefore, e.TokensAfter)
	case converse.ToolStart:
		p.tracef("→ %s %s %s\n", printable(e.Name), printable(e.ID), shorten(string(e.Input)))
	case converse.ToolEnd:
		result := string(e.Output)
		if e.Err != nil {
			result = e.Err.Error()
		}
		if errors.Is(e.Err, converse.ErrCallInterrupted) { // it ran in a process that died: no duration
			p.tracef("← %s %s %s: %s\n", printable(e.Name), printable(e.ID), e.Status, result)
			return
		}
		if e.Abandoned {
			// Every tool of converse ends with its context (a command's
			// process group is killed, a Lambda invoke or MCP call is
			// cancelled): it does not keep its slot for long.
			result += " (answered before the tool returned; it is being stopped)"
		}
		p.tracef("← %s %s %s in %v: %s\n", printable(e.Name), printable(e.ID), e.Status, roundDuration(e.Duration), withMedia(shorten(result), e.Media))
	case converse.AnswerRejected:
		p.tracef("· turn %d: answer rejected and sent back (%s): %s\n", e.Turn, shorten(e.Reason), shorten(e.Answer))
	case converse.Fallback:
		p.tracef("· turn %d: %s\n", e.Turn, e.Reason)
	case converse.ModelFallback:
		p.tracef("· turn %d: model %s failed (%s); trying %s\n", e.Turn, printable(e.From), shorten(e.Err.Error()), printable(e.To))
	case converse.ApprovalDecided:
		p.tracef("· %s %s %s\n", printable(e.Call.Tool), printable(e.Call.ID), decided(e.Decision))
	case converse.Resumed:
		p.tracef("· resuming the session: %s, %s\n", count(e.Messages, "message"), count(e.Decisions, "decision"))
	}
}

// count is n things, such as "1 message" or "2 messages".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// decided is a decision as the trace shows it: "approved", "denied by the
// user: not approved at the terminal".
func decided(d converse.Decision) string {
	s := string(d.Verdict)
	if d.By != "" {
		s += " by " + shorten(d.By)
	}
	if d.Reason != "" {
		s += ": " + shorten(d.Reason)
	}
	return s
}

// withMedia adds the images and documents of a tool's result to its trace,
// as "[image/png, 12 KiB]", never their bytes.
func withMedia(result string, media []converse.MediaInfo) string {
	for _, m := range media {
		if result != "" {
			result += " "
		}
		result += printable(m.String())
	}
	return result
}

// endText ends a line of assistant text, so that what follows, on stdout
// or stderr, starts on a line of its own.
func (p *printer) endText() {
	if p.midLine {
		io.WriteString(p.stdout, "\n")
		p.midLine = false
	}
}

// citations lists the sources of an answer after it, one line each, such
// as "[1] Annual report, page 3". With -json they are in the object instead.
func (p *printer) citations(cits []converse.Citation) {
	if p.noText {
		return
	}
	for i, c := range cits {
		fmt.Fprintf(p.stdout, "[%d] %s\n", i+1, printable(c.String()))
	}
}

// cacheNote is the prompt cache's part of a turn's usage, if any.
func cacheNote(u converse.Usage) string {
	if u.CacheReadInputTokens == 0 && u.CacheWriteInputTokens == 0 {
		return ""
	}
	return fmt.Sprintf(", %d read from the cache, %d written to it", u.CacheReadInputTokens, u.CacheWriteInputTokens)
}

// costNote is the cost of u at the prices of model, the model that
// answered the turn (a fallback's, maybe), as "; $0.000123", or nothing
// when they are unknown.
func costNote(model string, u converse.Usage) string {
	prices, ok := converse.PricesOf(model)
	if !ok {
		return ""
	}
	return "; " + usd(prices.Cost(u))
}

// usd is an amount in US dollars as the trace shows it: to the millionth,
// as a turn of a small model costs less than a cent.
func usd(v float64) string { return fmt.Sprintf("$%.6f", v) }

// total traces what a Send or Resume used: its model calls, tokens and,
// when the prices are known, cost.
func (p *printer) total(res *converse.Result) {
	cost := ""
	if res.CostUSD != nil {
		cost = "; " + usd(*res.CostUSD)
	}
	p.tracef("· total: %s, tokens %d in, %d out%s%s\n", count(res.Turns, "model call"), res.Usage.InputTokens, res.Usage.OutputTokens, cacheNote(res.Usage), cost)
}

// trimReason says why a history was trimmed.
func trimReason(e converse.Trimmed) string {
	if e.Overflow {
		return "the input was too long for the model; trimmed the history and retried"
	}
	return "trimmed the history to fit the context window"
}

func (p *printer) tracef(format string, args ...any) {
	if p.verbose {
		p.mu.Lock()
		defer p.mu.Unlock()
		fmt.Fprintf(p.stderr, format, args...)
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

// shorten makes s one line of at most maxShown runes for the trace, each
// run of white space one space, as printable shows it. It reads no more of
// s than it shows, however long s is.
func shorten(s string) string {
	out := make([]rune, 0, min(len(s), maxShown+1))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, r)
		if len(out) > maxShown {
			out = append(out[:maxShown-1], '…')
			break
		}
	}
	return printable(string(out))
}

// printable returns s as the trace shows text that the model or a tool
// controls: as it is if every character prints, else quoted as
// strconv.Quote does, so that no control character (such as the ESC of an
// ANSI escape sequence) and no invalid UTF-8 reaches the terminal.
func printable(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond)
	case d < time.Second:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// jsonResult is what -json prints for each prompt.
type jsonResult struct {
	Model      string          `json:"model"`
	Text       string          `json:"text"`
	StopReason string          `json:"stopReason,omitempty"`
	Turns      int             `json:"turns"`
	Usage      jsonUsage       `json:"usage"`
	CostUSD    *float64        `json:"cost_usd,omitempty"` // absent when the model's prices are unknown
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

// jsonCitation is a converse.Citation in -json.
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
		history, err := converse.MarshalMessages(res.History)
		if err != nil {
			return fmt.Errorf("-json: %w", err)
		}
		u := res.Usage
		out.Text, out.StopReason, out.Turns, out.History, out.CostUSD = res.Text, string(res.StopReason), res.Turns, history, res.CostUSD
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
