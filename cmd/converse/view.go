package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/modelinfo"
)

var (
	//go:embed view.html
	viewHTML string
	//go:embed view.js
	viewJS   string
	viewTmpl = template.Must(template.New("view").Parse(viewHTML))
)

// isView reports whether args ask for converse view: its first word is
// "view". Without its file, it is a usage error, not a prompt "view" sent
// (and paid for); a prompt goes after --.
func isView(args []string) bool {
	return len(args) > 0 && args[0] == "view"
}

// view is converse view [-o FILE] [-price IN,OUT[,READ,WRITE]] INPUT.
func view(ctx context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("converse view", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by report
	out := fs.String("o", "", "write the HTML to `FILE` instead of standard output")
	var price priceFlag
	fs.Var(&price, "price", "USD per million input and output tokens, and optionally cache reads and writes, for the cost (default: the model's on-demand prices, when converse knows them): `IN,OUT[,READ,WRITE]`")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: converse view [-o FILE] [-price IN,OUT[,READ,WRITE]] INPUT\n\n"+
				"INPUT is a -session file or dynamodb://TABLE/SESSION-ID, a -record recording or the output of -json (converse help view).\n\n")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil
		}
		return usagef("view: %v (run converse view -h for usage)", err)
	}
	if fs.NArg() == 0 {
		return usagef("view: no INPUT file: want converse view [-o FILE] [-price IN,OUT[,READ,WRITE]] INPUT (a prompt \"view\" goes after --: converse -- view)")
	}
	if fs.NArg() != 1 {
		return usagef("view: want one INPUT file, got %d arguments", fs.NArg())
	}
	t, err := readTranscript(ctx, fs.Arg(0))
	if err != nil {
		// An input that cannot be read or used is a usage error, as an
		// unreadable -replay recording is.
		return usagef("view: %w", err)
	}
	source := fs.Arg(0)
	if _, _, dynamo := dynamoSession(source); !dynamo {
		source = filepath.Base(source)
	}
	page := t.page(source, price.p)
	var buf bytes.Buffer
	if err := viewTmpl.Execute(&buf, page); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	if *out == "" {
		_, err = stdout.Write(buf.Bytes())
		return err
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o600); err != nil { // a transcript may be private
		return fmt.Errorf("view: %w", err)
	}
	return nil
}

// priceFlag is the -price flag: USD per million tokens, which replace the
// model's known prices; p is nil when it is not given.
type priceFlag struct{ p *modelinfo.Prices }

func (f *priceFlag) String() string { return "" }

func (f *priceFlag) Set(s string) error {
	parts := strings.Split(s, ",")
	if len(parts) != 2 && len(parts) != 4 {
		return fmt.Errorf("want IN,OUT or IN,OUT,READ,WRITE, got %q", s)
	}
	vals := make([]float64, 4)
	for i, f := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v < 0 {
			return fmt.Errorf("%q is not a price", f)
		}
		vals[i] = v
	}
	f.p = &modelinfo.Prices{Input: vals[0], Output: vals[1], CacheRead: vals[2], CacheWrite: vals[3]}
	return nil
}

// cost is the cost of t's usage at price, else the cost -json output
// gave, else at its model's prices as modelinfo.PricesOf knows them; ""
// when none is known.
func (t *transcript) cost(price *modelinfo.Prices) string {
	if price == nil && t.costUSD != nil {
		return usd(*t.costUSD)
	}
	if price == nil {
		known, ok := modelinfo.PricesOf(t.model)
		if !ok {
			return ""
		}
		price = &known
	}
	return usd(t.usage.Cost(*price))
}

func usd(f float64) string { return fmt.Sprintf("$%.4f", f) }

// The page's model: everything from the input is a string that html/template
// escapes; only the data: URIs of images, which view builds itself from
// decoded bytes, are marked safe.
type (
	viewPage struct {
		Title, Kind, Model, Source string
		Usage                      converse.Usage
		Cost                       string
		Turns, Calls, Failed       int
		ModelTime                  string
		Timing                     string // where the durations come from
		Timed                      bool   // whether any bar is drawn
		Items                      []viewItem
		CSP                        string
		Script                     template.JS
	}
	viewItem struct {
		Prompt *viewPrompt // what -json output holds of the prompt starting here
		User   []viewBlock // a user message that is not only tool results
		Turn   *viewTurn
	}
	viewPrompt struct {
		N, Turns   int
		Usage      converse.Usage
		Cost       string
		StopReason string
		Error      string
	}
	viewTurn struct {
		Anchor     string
		N          int
		Took       string
		Bar        *viewBar // the model call's, nil when its time is not known
		Usage      converse.Usage
		UsageKnown bool // older session files hold no usage per turn; -json output only a prompt of one call's
		StopReason string
		Blocks     []viewBlock
		Calls      []viewCall
		Round      string // the tool round, first start to last end
		Parallel   bool
	}
	viewCall struct {
		Anchor, ID, Name string
		Input            viewBlock
		Output           []viewBlock
		Failed           bool
		Marks            []viewMark
		Bar              *viewBar
		Took             string
		Nested           *viewNested // the agent's conversation the call ran
	}
	// viewNested is an agent's conversation, drawn under the call that ran
	// it, on the page's time axis.
	viewNested struct {
		Anchor, ID, Model string
		Error             string // why it could not be read
		Turns, Calls      int
		Usage             converse.Usage
		Items             []viewItem
	}
	// viewBar places a bar on the page's one time axis, in %.
	viewBar  struct{ Left, Width string }
	viewMark struct {
		Class, Text string // Class is Text's first word: error, timeout, denied, ...
	}
	viewBlock struct {
		Kind    string // text, reasoning, json, image, note
		Text    string
		Summary string // the start of a long text, which is collapsed
		Image   template.URL
	}
)

const (
	collapseAt = 400 // bytes; a longer text is collapsed
	summaryLen = 160
)

// page builds the page of t.
func (t *transcript) page(source string, price *modelinfo.Prices) *viewPage {
	source = bidiVisible(source)
	p := &viewPage{Title: "converse view: " + source, Kind: t.kind, Model: bidiVisible(t.model), Source: source, Usage: t.usage, Cost: t.cost(price)}
	p.Timing, p.ModelTime = t.timing()
	if t.nestCut {
		p.Timing += fmt.Sprintf("; agents' conversations were looked up for %d calls only, the first ones", nestReads)
	}
	ax := newAxis(t)
	p.Timed = ax.whole > 0
	p.Items, p.Turns, p.Calls, p.Failed = t.items("", ax)
	sum := sha256.Sum256([]byte(viewJS))
	p.CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	p.Script = template.JS(viewJS) // the page's own script, never input
	return p
}

// items are the prompts, user messages and turns of t, and how many turns,
// calls and failed calls it has. The anchors of a nested conversation's
// turns and calls start with anchor, so that they are the page's only.
func (t *transcript) items(anchor string, ax axis) (items []viewItem, turns, calls, failed int) {
	prompts := t.prompts // those not yet placed, each before its first message
	placePrompts := func(i int) {
		for ; len(prompts) > 0 && prompts[0].at <= i; prompts = prompts[1:] {
			items = append(items, viewItem{Prompt: prompts[0].view()})
		}
	}
	for i, m := range t.history {
		placePrompts(i)
		if m.Role != "assistant" {
			if blocks := userBlocks(m); len(blocks) > 0 {
				items = append(items, viewItem{User: blocks})
			}
			continue
		}
		turns++
		var answers wireMessage
		if i+1 < len(t.history) {
			answers = t.history[i+1]
		}
		turn := t.turn(anchor, turns, m, answers, t.turns[i], ax)
		calls += len(turn.Calls)
		for _, c := range turn.Calls {
			if c.Failed {
				failed++
			}
		}
		items = append(items, viewItem{Turn: turn})
	}
	placePrompts(len(t.history)) // a prompt that added no message
	return items, turns, calls, failed
}

// nestedView is the agent's conversation that the call id ran, nil when
// it ran none; its anchors start with anchor.
func (t *transcript) nestedView(id, anchor string, ax axis) *viewNested {
	n := t.nested[id]
	if n == nil {
		return nil
	}
	v := &viewNested{Anchor: anchor, ID: bidiVisible(n.id)}
	if n.err != nil {
		v.Error = bidiVisible(n.err.Error())
		return v
	}
	v.Model, v.Usage = bidiVisible(n.t.model), n.t.usage
	v.Items, v.Turns, v.Calls, _ = n.t.items(anchor+"-", ax)
	return v
}

// timing says where the durations come from, and the model calls' total.
func (t *transcript) timing() (where, modelTime string) {
	switch {
	case t.bedrock:
		where = "durations are Bedrock's latencyMs; call times were not recorded, so the model calls are drawn back to back"
	case t.kind == jsonOutputKind:
		where = "-json output holds no times, and the usage of each prompt, not of each model call"
	default:
		where = "durations measured by the conversation, drawn on one time axis from its start"
	}
	var total time.Duration
	for _, rec := range t.turns {
		total += rec.Duration
	}
	if total == 0 {
		return where, "unknown"
	}
	return where, duration(total)
}

func (pr promptRecord) view() *viewPrompt {
	v := &viewPrompt{N: pr.n, Turns: pr.turns, Usage: pr.usage, StopReason: bidiVisible(pr.stopReason), Error: bidiVisible(pr.err)}
	if pr.costUSD != nil {
		v.Cost = usd(*pr.costUSD)
	}
	return v
}

// axis is the page's one time scale, so that bars of different rounds compare.
// A bar's left edge is its start's distance from the conversation's start, and
// its width its duration. Both are in % of the conversation's whole time.
type axis struct {
	start time.Time
	whole time.Duration
}

// newAxis spans every model call and tool call whose times t knows, the
// agents' conversations' with them: their times are clock times too.
func newAxis(t *transcript) axis {
	var first, last time.Time
	see := func(start, end time.Time) {
		if first.IsZero() || start.Before(first) {
			first = start
		}
		last = later(last, end)
	}
	var span func(t *transcript)
	span = func(t *transcript) {
		for _, rec := range t.turns {
			if start, ok := modelStart(rec.TurnRecord); ok {
				see(start, rec.End)
			}
			for _, cr := range rec.Calls {
				if timed(cr) {
					see(cr.Start, cr.End)
				}
			}
		}
		for _, n := range t.nested {
			if n.err == nil {
				span(n.t)
			}
		}
	}
	span(t)
	return axis{first, last.Sub(first)}
}

// bar places the span from start to end, or is nil when the axis has no
// length.
func (a axis) bar(start, end time.Time) *viewBar {
	if a.whole <= 0 {
		return nil
	}
	return &viewBar{percent(float64(start.Sub(a.start)) / float64(a.whole)), percent(float64(end.Sub(start)) / float64(a.whole))}
}

// modelStart is when a turn's model call started, if its record knows.
func modelStart(rec converse.TurnRecord) (time.Time, bool) {
	return rec.End.Add(-rec.Duration), !rec.End.IsZero() && rec.Duration > 0
}

// timed reports whether a call's start and end are known.
func timed(cr converse.CallRecord) bool { return !cr.Start.IsZero() && !cr.End.IsZero() }

// wireToolUse is a toolUse block of the wire JSON.
type wireToolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

func parseToolUse(raw json.RawMessage) (wireToolUse, error) {
	var tu wireToolUse
	return tu, json.Unmarshal(raw, &tu)
}

// turn is turn n, the reply m; its anchors start with anchor.
func (t *transcript) turn(anchor string, n int, m, answers wireMessage, rec turnRecord, ax axis) *viewTurn {
	vt := &viewTurn{Anchor: fmt.Sprintf("%sturn-%d", anchor, n), N: n, Took: "unknown", Usage: rec.Usage, UsageKnown: rec.usageKnown, StopReason: bidiVisible(string(rec.StopReason))}
	if vt.StopReason == "" {
		vt.StopReason = "unknown"
	}
	if rec.Duration > 0 {
		vt.Took = duration(rec.Duration)
	}
	if start, ok := modelStart(rec.TurnRecord); ok {
		vt.Bar = ax.bar(start, rec.End)
	}
	results := resultsByID(answers)
	var records []converse.CallRecord // of vt.Calls
	for _, b := range m.Content {
		raw, ok := b["toolUse"]
		if !ok {
			vt.Blocks = append(vt.Blocks, contentBlocks(b)...)
			continue
		}
		tu, err := parseToolUse(raw)
		if err != nil {
			vt.Blocks = append(vt.Blocks, viewBlock{Kind: "note", Text: "a toolUse block that is not JSON of a toolUse"})
			continue
		}
		cr := rec.Calls[tu.ToolUseID]
		c := viewCall{Anchor: fmt.Sprintf("%scall-%d-%d", anchor, n, len(vt.Calls)+1), ID: bidiVisible(tu.ToolUseID), Name: bidiVisible(tu.Name), Input: jsonBlock(tu.Input)}
		c.Output, c.Failed, c.Marks = result(results[tu.ToolUseID], cr)
		if timed(cr) {
			c.Took, c.Bar = duration(cr.End.Sub(cr.Start)), ax.bar(cr.Start, cr.End)
		}
		c.Nested = t.nestedView(tu.ToolUseID, c.Anchor, ax)
		vt.Calls, records = append(vt.Calls, c), append(records, cr)
	}
	vt.Round, vt.Parallel = round(records)
	return vt
}

// resultsByID are the toolResult blocks of a user message, by toolUseId.
func resultsByID(answers wireMessage) map[string]json.RawMessage {
	results := map[string]json.RawMessage{}
	for _, b := range answers.Content {
		if r, ok := b["toolResult"]; ok {
			var id struct {
				ToolUseID string `json:"toolUseId"`
			}
			if json.Unmarshal(r, &id) == nil {
				results[id.ToolUseID] = r
			}
		}
	}
	return results
}

// round is how long a tool round took, from its first call's start to its
// last one's end ("" when no call was timed), and whether any calls
// overlapped.
func round(calls []converse.CallRecord) (took string, parallel bool) {
	var first, last time.Time
	var ends []time.Time // of the calls seen so far
	for _, cr := range calls {
		if !timed(cr) {
			continue
		}
		for _, e := range ends {
			parallel = parallel || cr.Start.Before(e)
		}
		ends = append(ends, cr.End)
		if first.IsZero() || cr.Start.Before(first) {
			first = cr.Start
		}
		last = later(last, cr.End)
	}
	if first.IsZero() {
		return "", false
	}
	return duration(last.Sub(first)), parallel
}

// result is the output of a call's toolResult, whether it failed, and
// what the marks of the call are.
func result(raw json.RawMessage, cr converse.CallRecord) ([]viewBlock, bool, []viewMark) {
	out, failed, marks := resultMarks(raw, cr)
	var vm []viewMark
	for _, m := range marks {
		class, _, _ := strings.Cut(m, " ")
		vm = append(vm, viewMark{Class: class, Text: bidiVisible(m)})
	}
	return out, failed, vm
}

func resultMarks(raw json.RawMessage, cr converse.CallRecord) ([]viewBlock, bool, []string) {
	var marks []string
	switch cr.Verdict {
	case converse.Approved, converse.Denied:
		marks = append(marks, fmt.Sprintf("%s by %s", cr.Verdict, cr.By))
	}
	if raw == nil {
		return []viewBlock{{Kind: "note", Text: "no result: the call was not answered"}}, false, append(marks, "unanswered")
	}
	var r struct {
		Status  string                       `json:"status"`
		Content []map[string]json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return []viewBlock{{Kind: "note", Text: "a toolResult that is not JSON of a toolResult"}}, true, append(marks, "error")
	}
	var out []viewBlock
	for _, b := range r.Content {
		out = append(out, contentBlocks(b)...)
	}
	for i, b := range out {
		var s string // converse sends an output that is a string as its JSON: shown as the string
		if b.Kind == "text" && strings.HasPrefix(b.Text, `"`) && json.Unmarshal([]byte(b.Text), &s) == nil {
			out[i] = textBlock("text", s)
		}
	}
	var text strings.Builder
	for _, b := range out {
		text.WriteString(b.Text)
	}
	s := text.String()
	failed := r.Status == "error" || strings.HasPrefix(s, "Error:")
	has := func(sub string) bool { return strings.Contains(s, sub) }
	cancelled := failed && has(" was cancelled")
	for _, m := range []struct {
		on   bool
		mark string
	}{
		{failed, "error"},
		{has(" timed out after "), "timeout"},
		{cr.Truncated || has("… [truncated: "), "truncated"},
		{cr.Verdict == "" && has("the call was denied by "), "denied"},
		{has("the call was interrupted before it returned"), "interrupted"},
		// A call cancelled (Ctrl-C, an interrupt) while its tool still
		// ran was left behind too, but it is no hung call.
		{cancelled, "cancelled"},
		{cr.Abandoned && !cancelled, "abandoned"},
	} {
		if m.on {
			marks = append(marks, m.mark)
		}
	}
	return out, failed, marks
}

// userBlocks are the blocks of a user message but its tool results, which
// are shown with their calls.
func userBlocks(m wireMessage) []viewBlock {
	var out []viewBlock
	for _, b := range m.Content {
		if _, ok := b["toolResult"]; !ok {
			out = append(out, contentBlocks(b)...)
		}
	}
	return out
}

// contentBlocks shows one content block of a message or a tool result.
func contentBlocks(b map[string]json.RawMessage) []viewBlock {
	var out []viewBlock
	for kind, raw := range b {
		switch kind {
		case "text":
			var s string
			if json.Unmarshal(raw, &s) == nil {
				out = append(out, textBlock("text", s))
			}
		case "json":
			out = append(out, jsonBlock(raw))
		case "reasoningContent":
			var r struct {
				ReasoningText struct{ Text string } `json:"reasoningText"`
			}
			if json.Unmarshal(raw, &r) == nil && r.ReasoningText.Text != "" {
				out = append(out, textBlock("reasoning", r.ReasoningText.Text))
			} else {
				out = append(out, viewBlock{Kind: "note", Text: "reasoning (redacted)"})
			}
		case "image":
			out = append(out, imageBlock(raw))
		case "cachePoint":
		default:
			out = append(out, viewBlock{Kind: "note", Text: fmt.Sprintf("a %s block (%d bytes of JSON)", kind, len(raw))})
		}
	}
	return out
}

// imageMIME are the image formats shown inline, as data: URIs.
var imageMIME = map[string]string{"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}

// imageBlock shows an image whose bytes the block holds; the data: URI is
// built here from the decoded bytes, never taken from the input.
func imageBlock(raw json.RawMessage) viewBlock {
	var img struct {
		Format string `json:"format"`
		Source struct {
			Bytes []byte `json:"bytes"` // base64 in the wire JSON, decoded by encoding/json
		} `json:"source"`
	}
	if json.Unmarshal(raw, &img) != nil {
		return viewBlock{Kind: "note", Text: "an image block that is not JSON of an image"}
	}
	mime, ok := imageMIME[img.Format]
	if !ok || len(img.Source.Bytes) == 0 {
		return viewBlock{Kind: "note", Text: fmt.Sprintf("an image (%q) not shown: not PNG, JPEG, GIF or WebP bytes", img.Format)}
	}
	uri := "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(img.Source.Bytes)
	return viewBlock{Kind: "image", Text: fmt.Sprintf("%s image, %d bytes", img.Format, len(img.Source.Bytes)), Image: template.URL(uri)}
}

func jsonBlock(raw json.RawMessage) viewBlock {
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return textBlock("json", string(raw))
	}
	return textBlock("json", buf.String())
}

// textBlock is a text, collapsed when it is long, its bidirectional
// formatting characters shown as \u escapes, as on a terminal: a model's or
// tool's text cannot reorder what the page shows.
func textBlock(kind, s string) viewBlock {
	s = bidiVisible(s)
	b := viewBlock{Kind: kind, Text: s}
	if len(s) > collapseAt || strings.Count(s, "\n") > 8 {
		cut := s
		if i := strings.IndexByte(cut, '\n'); i >= 0 {
			cut = cut[:i]
		}
		if len(cut) > summaryLen {
			cut = strings.ToValidUTF8(cut[:summaryLen], "")
		}
		b.Summary = fmt.Sprintf("%s… (%d bytes)", cut, len(s))
	}
	return b
}

func duration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

func percent(f float64) string { return strconv.FormatFloat(min(max(f, 0), 1)*100, 'f', 2, 64) }

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
