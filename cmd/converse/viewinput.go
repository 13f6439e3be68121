package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/dynamostore"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/converse/wirejson"
)

// transcript is what converse view draws, read from a session, a recording
// or -json output: the history in Bedrock's wire JSON and what is known of
// each reply, by the index of its message.
type transcript struct {
	kind    string // "session", "recording" or jsonOutputKind
	model   string
	history []wireMessage
	turns   map[int]turnRecord
	bedrock bool // the durations are Bedrock's latencyMs (a recording), not the conversation's
	usage   converse.Usage
	costUSD *float64                  // -json output: the sum of its costUSD, when each prompt had one
	prompts []promptRecord            // -json output's, in order
	nested  map[string]*nestedSession // a session's: the agents' conversations its calls ran, by toolUseId
	nestCut bool                      // whether readNested stopped at nestReads
}

// turnRecord is what the input holds of one reply. -json output holds the
// usage of a prompt, which is a turn's own only when the prompt made one
// model call.
type turnRecord struct {
	converse.TurnRecord
	usageKnown bool
}

// promptRecord is what one object of -json output holds of its prompt
// beyond the history; at is the index of the prompt's first message.
type promptRecord struct {
	n, at, turns int
	usage        converse.Usage
	costUSD      *float64
	stopReason   string
	err          string
}

// jsonOutputKind is the kind of a transcript read from -json output.
const jsonOutputKind = "-json output"

// wireMessage is a message in Bedrock's wire JSON; each block is kept as
// its one member ("text", "toolUse", ...) and that member's JSON.
type wireMessage struct {
	Role    string                       `json:"role"`
	Content []map[string]json.RawMessage `json:"content"`
}

// readTranscript reads the file at path, whichever of the three it is, or
// the session of dynamodb://TABLE/SESSION-ID.
func readTranscript(ctx context.Context, path string) (*transcript, error) {
	if table, id, ok := dynamoSession(path); ok {
		return dynamoTranscript(ctx, path, table, id)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var probe map[string]json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&probe); err != nil {
		return nil, fmt.Errorf("%s: not a session file, a recording or -json output: %w", path, err)
	}
	switch {
	case probe["exchanges"] != nil:
		rec, err := recording.Load(path)
		if err != nil {
			return nil, err
		}
		return recordingTranscript(rec)
	case probe["history"] != nil:
		return jsonTranscript(b)
	case probe["messages"] != nil && probe["version"] != nil:
		store, id := filestore.Store{Dir: filepath.Dir(path)}, filepath.Base(path)
		st, err := store.Load(ctx, id)
		if err != nil {
			return nil, err
		}
		return withNested(ctx, st, store.Load, id)
	}
	return nil, fmt.Errorf("%s: not a session file (no \"version\" and \"messages\"), a recording (no \"exchanges\") or -json output (no \"history\")", path)
}

// dynamoTranscript reads the session id of a DynamoDB table, as -session
// dynamodb://TABLE/SESSION-ID keeps it, without changing it: a Load reads
// the item, takes no lease and writes nothing. A state past the item
// limit is read from the S3 object its item names.
func dynamoTranscript(ctx context.Context, url, table, id string) (*transcript, error) {
	if table == "" || id == "" {
		return nil, fmt.Errorf("%s: want dynamodb://TABLE/SESSION-ID", url)
	}
	cfg, err := loadConfig(ctx, &settings{})
	if err != nil {
		return nil, err
	}
	store := dynamostore.New(dynamodb.NewFromConfig(cfg), table, func(o *dynamostore.Options) { o.S3 = s3Client(cfg) })
	st, err := store.Load(ctx, id)
	switch hint := missingTable(url, err); {
	case hint != "":
		return nil, &restated{url + ": " + hint, err}
	case errors.Is(err, fs.ErrNotExist):
		return nil, &restated{url + ": no such session in the table", err}
	case err != nil:
		return nil, err
	}
	return withNested(ctx, st, store.Load, id)
}

// nestedSession is the conversation of an agent that a call ran, which
// converse/agenttool saves as the session "<caller's ID>.<toolUseId>".
type nestedSession struct {
	id  string
	t   *transcript // nil when it could not be read
	err error
}

const (
	nestDepth = 4   // levels of agents' conversations drawn under their calls
	nestReads = 200 // sessions read, at most, to find them
)

// toolUseID is the form of Bedrock's toolUseId. Only such an id is looked
// up: another could name a file elsewhere, and no agent was saved under it.
var toolUseID = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// withNested is the transcript of the session id, whose state is st, with
// the agents' conversations its calls ran, found by load.
func withNested(ctx context.Context, st *converse.State, load func(context.Context, string) (*converse.State, error), id string) (*transcript, error) {
	t, err := sessionTranscript(st)
	if err != nil {
		return nil, err
	}
	var b nestBudget
	t.readNested(ctx, load, id, 0, &b)
	t.nestCut = b.cut
	return t, nil
}

// nestBudget counts the sessions readNested looked up, and whether it
// stopped at nestReads.
type nestBudget struct {
	reads int
	cut   bool
}

// readNested reads the agents' conversations that the calls of t ran,
// found by load as the sessions "<id>.<toolUseId>", and theirs in turn.
// A call without one ran no agent, or ran it without a Store: that is no
// error. Reading stops after depth nestDepth, or nestReads sessions
// looked up in all.
func (t *transcript) readNested(ctx context.Context, load func(context.Context, string) (*converse.State, error), id string, depth int, b *nestBudget) {
	if depth >= nestDepth {
		return
	}
	for _, m := range t.history {
		for _, block := range m.Content {
			tu, err := parseToolUse(block["toolUse"])
			if m.Role != "assistant" || err != nil || !toolUseID.MatchString(tu.ToolUseID) {
				continue
			}
			if b.reads >= nestReads {
				b.cut = true
				return
			}
			b.reads++
			child := id + "." + tu.ToolUseID
			st, err := load(ctx, child)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			n := &nestedSession{id: child, err: err}
			if err == nil {
				n.t, n.err = sessionTranscript(st)
			}
			if n.err == nil {
				n.t.readNested(ctx, load, child, depth+1, b)
			}
			if t.nested == nil {
				t.nested = map[string]*nestedSession{}
			}
			t.nested[tu.ToolUseID] = n
		}
	}
}

func sessionTranscript(st *converse.State) (*transcript, error) {
	raw, err := wirejson.MarshalMessages(st.Messages)
	if err != nil {
		return nil, err
	}
	t := &transcript{kind: "session", model: st.ModelID, turns: map[int]turnRecord{}, usage: st.Usage}
	for i, rec := range st.Turns {
		t.turns[i] = turnRecord{rec, true}
	}
	return t, json.Unmarshal(raw, &t.history)
}

// jsonObject is what view reads of an object -json printed, one a
// prompt: it holds no times, and the usage of the prompt's model calls
// together.
type jsonObject struct {
	Model      string          `json:"model"`
	StopReason string          `json:"stopReason"`
	Turns      int             `json:"turns"`
	Usage      converse.Usage  `json:"usage"`
	CostUSD    *float64        `json:"costUSD"`
	History    json.RawMessage `json:"history"`
	Error      string          `json:"error"`
}

// jsonTranscript reads the objects -json printed: the history of the last,
// the usage of all, and what each object holds of its prompt.
func jsonTranscript(b []byte) (*transcript, error) {
	t := &transcript{kind: jsonOutputKind, turns: map[int]turnRecord{}}
	dec := json.NewDecoder(bytes.NewReader(b))
	var cost float64
	priced := true
	for n := 1; ; n++ {
		var r jsonObject
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("-json output: %w", err)
		}
		var history []wireMessage
		if err := json.Unmarshal(r.History, &history); err != nil {
			return nil, fmt.Errorf("-json output: history: %w", err)
		}
		start := len(t.history)
		if n == 1 || start > len(history) { // the first prompt, or another conversation's
			start = promptStart(history)
			clear(t.turns)
			t.prompts = nil
		}
		t.model, t.history, t.usage = r.Model, history, t.usage.Add(r.Usage)
		t.notePrompt(n, start, r)
		if priced = priced && r.CostUSD != nil; priced {
			cost += *r.CostUSD
		}
	}
	if priced {
		t.costUSD = &cost
	}
	return t, nil
}

// promptStart is the index of the last prompt's first message: the last
// user message holding more than tool results.
func promptStart(history []wireMessage) int {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == "user" && len(userBlocks(history[i])) > 0 {
			return i
		}
	}
	return 0
}

// notePrompt keeps what object n of -json output holds of its prompt,
// whose messages start at start. Each model call of a prompt that did not
// fail added one reply: then its stop reason is its last reply's, and the
// usage of a prompt of one call is its reply's.
func (t *transcript) notePrompt(n, start int, r jsonObject) {
	t.prompts = append(t.prompts, promptRecord{n: n, at: start, turns: r.Turns, usage: r.Usage, costUSD: r.CostUSD, stopReason: r.StopReason, err: r.Error})
	var replies []int
	for i := start; i < len(t.history); i++ {
		if t.history[i].Role == "assistant" {
			replies = append(replies, i)
		}
	}
	if len(replies) == 0 || len(replies) != r.Turns {
		return
	}
	rec := turnRecord{TurnRecord: converse.TurnRecord{StopReason: types.StopReason(r.StopReason)}}
	if len(replies) == 1 {
		rec.Usage, rec.usageKnown = r.Usage, true
	}
	t.turns[replies[len(replies)-1]] = rec
}

// recordingTranscript is the conversation of the last exchange: its
// request's messages and its reply, with each exchange's usage, stop reason
// and Bedrock's latency.
func recordingTranscript(rec *recording.Recording) (*transcript, error) {
	t := &transcript{kind: "recording", turns: map[int]turnRecord{}, bedrock: true}
	// A recording holds no clock times. So its model calls are laid out back
	// to back on the page's axis, each ending at the sum of the latencies so
	// far. The sum counts from the Unix epoch, as a zero time means unknown.
	clock := time.Unix(0, 0)
	for i, ex := range rec.Exchanges {
		var req struct {
			Messages []wireMessage `json:"messages"`
		}
		if err := json.Unmarshal(ex.Request, &req); err != nil {
			return nil, fmt.Errorf("exchange %d: request: %w", i+1, err)
		}
		t.model, t.history = ex.ModelID, req.Messages
		reply, rt, err := exchangeReply(ex)
		if err != nil {
			return nil, fmt.Errorf("exchange %d: %w", i+1, err)
		}
		if reply == nil {
			continue // an error response
		}
		clock = clock.Add(rt.Duration)
		rt.End = clock
		t.turns[len(t.history)] = turnRecord{rt, true}
		t.history = append(t.history, *reply)
		t.usage = t.usage.Add(rt.Usage)
	}
	return t, nil
}

// replyJSON is what a Converse response and a stream's events share.
type replyJSON struct {
	StopReason string         `json:"stopReason"`
	Usage      converse.Usage `json:"usage"`
	Metrics    struct {
		LatencyMs float64 `json:"latencyMs"`
	} `json:"metrics"`
}

// exchangeReply is the reply of one exchange, nil for an error response.
func exchangeReply(ex recording.Exchange) (*wireMessage, converse.TurnRecord, error) {
	var r replyJSON
	var msg *wireMessage
	switch {
	case ex.Status != 200:
		return nil, converse.TurnRecord{}, nil
	case ex.Operation == recording.OpConverseStream:
		var err error
		if msg, err = assemble(ex.Events, &r); err != nil {
			return nil, converse.TurnRecord{}, err
		}
	default:
		var out struct {
			replyJSON
			Output struct {
				Message wireMessage `json:"message"`
			} `json:"output"`
		}
		if err := json.Unmarshal(ex.Response, &out); err != nil {
			return nil, converse.TurnRecord{}, fmt.Errorf("response: %w", err)
		}
		r, msg = out.replyJSON, &out.Output.Message
	}
	return msg, converse.TurnRecord{
		Duration:   time.Duration(r.Metrics.LatencyMs * float64(time.Millisecond)),
		StopReason: types.StopReason(r.StopReason),
		Usage:      r.Usage,
	}, nil
}

// assemble builds the message a stream's events carry, as Converse would
// have returned it, and reads its stop reason, usage and latency into r.
func assemble(events []recording.Event, r *replyJSON) (*wireMessage, error) {
	s := streamBlocks{limit: len(events)}
	for k, ev := range events {
		var p streamEvent
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			return nil, fmt.Errorf("event %d (%s): %w", k+1, ev.Type, err)
		}
		s.apply(ev.Type, &p, r)
	}
	msg := &wireMessage{Role: "assistant"}
	for _, b := range s.blocks {
		m, err := b.content()
		if err != nil {
			return nil, err
		}
		if m != nil {
			msg.Content = append(msg.Content, m)
		}
	}
	return msg, nil
}

// streamEvent holds the fields of the stream events that assemble reads.
type streamEvent struct {
	Index int `json:"contentBlockIndex"`
	Start struct {
		ToolUse *struct {
			ToolUseID string `json:"toolUseId"`
			Name      string `json:"name"`
		} `json:"toolUse"`
	} `json:"start"`
	Delta struct {
		Text             *string                 `json:"text"`
		ToolUse          *struct{ Input string } `json:"toolUse"`
		ReasoningContent *struct{ Text string }  `json:"reasoningContent"`
	} `json:"delta"`
	replyJSON
}

// streamBlocks are the content blocks of a stream, by index.
type streamBlocks struct {
	blocks []*streamBlock
	limit  int // no stream has more blocks than events
}

// streamBlock is one content block, built up from its deltas.
type streamBlock struct {
	text, reasoning strings.Builder
	tool            map[string]any
	input           strings.Builder
}

// at returns the block at index i. An index out of range gets a block that
// is thrown away, so a wrong index cannot make a huge slice.
func (s *streamBlocks) at(i int) *streamBlock {
	if i < 0 || i > s.limit {
		return &streamBlock{}
	}
	for len(s.blocks) <= i {
		s.blocks = append(s.blocks, &streamBlock{})
	}
	return s.blocks[i]
}

// apply adds one event of type typ to its block, or its reply fields to r.
func (s *streamBlocks) apply(typ string, p *streamEvent, r *replyJSON) {
	switch typ {
	case "contentBlockStart":
		if tu := p.Start.ToolUse; tu != nil {
			s.at(p.Index).tool = map[string]any{"toolUseId": tu.ToolUseID, "name": tu.Name}
		}
	case "contentBlockDelta":
		b := s.at(p.Index)
		switch d := p.Delta; {
		case d.Text != nil:
			b.text.WriteString(*d.Text)
		case d.ToolUse != nil:
			b.input.WriteString(d.ToolUse.Input)
		case d.ReasoningContent != nil:
			b.reasoning.WriteString(d.ReasoningContent.Text)
		}
	case "messageStop":
		r.StopReason = p.StopReason
	case "metadata":
		r.Usage, r.Metrics = p.Usage, p.Metrics
	}
}

// content returns the block as a Converse content block, or nil for an
// empty one.
func (b *streamBlock) content() (map[string]json.RawMessage, error) {
	var block map[string]any
	switch {
	case b.tool != nil:
		input := json.RawMessage(b.input.String())
		if !json.Valid(input) {
			input, _ = json.Marshal(b.input.String()) // shown as the text it was
		}
		b.tool["input"] = input
		block = map[string]any{"toolUse": b.tool}
	case b.reasoning.Len() > 0:
		block = map[string]any{"reasoningContent": map[string]any{"reasoningText": map[string]any{"text": b.reasoning.String()}}}
	case b.text.Len() > 0:
		block = map[string]any{"text": b.text.String()}
	default:
		return nil, nil
	}
	raw, err := json.Marshal(block)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}
