package evaltest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/converse/modelinfo"
	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/converse/wirejson"
)

// Trajectory is what an agent did in a finished conversation: its tool
// calls in order, its final answer and what it spent. Assertions check it.
type Trajectory struct {
	// Calls are the client tool calls, in the order the model asked for them.
	Calls []ToolCall
	// Answer is the text of the last assistant message.
	Answer string
	// Turns counts the model calls (the assistant messages).
	Turns int
	// Usage sums the tokens, and CostUSD prices them (0 when the model's
	// prices are unknown).
	Usage   converse.Usage
	CostUSD float64
	// Messages is the history the trajectory was read from.
	Messages []types.Message
}

// ToolCall is one tool call of a Trajectory.
type ToolCall struct {
	Turn  int // the model call that asked for it, from 1
	ID    string
	Tool  string
	Input json.RawMessage
	// Status is "success" or "error", or "" for a call nothing answered.
	Status string
	// Output is the text of the result the model got.
	Output string
}

// FromResult is the trajectory of a Send's Result: its whole history.
func FromResult(res *converse.Result) *Trajectory {
	t := FromHistory(res.History)
	t.Usage = res.Usage
	if res.CostUSD != nil {
		t.CostUSD = *res.CostUSD
	}
	if res.Text != "" {
		t.Answer = res.Text
	}
	return t
}

// FromState is the trajectory of a conversation's State, over all its Sends.
func FromState(st *converse.State) *Trajectory {
	t := FromHistory(st.Messages)
	t.Usage = st.Usage
	t.CostUSD = costOf(st.ModelID, st.Usage)
	return t
}

// FromHistory is the trajectory of a history; it knows no usage.
func FromHistory(msgs []types.Message) *Trajectory {
	t := &Trajectory{Messages: msgs}
	byID := map[string]int{}
	for _, m := range msgs {
		if m.Role == types.ConversationRoleAssistant {
			t.Turns++
			t.Answer = textOf(m)
		}
		for _, b := range m.Content {
			switch b := b.(type) {
			case *types.ContentBlockMemberToolUse:
				if b.Value.Type == types.ToolUseTypeServerToolUse {
					continue
				}
				byID[aws.ToString(b.Value.ToolUseId)] = len(t.Calls)
				t.Calls = append(t.Calls, ToolCall{
					Turn: t.Turns, ID: aws.ToString(b.Value.ToolUseId),
					Tool: aws.ToString(b.Value.Name), Input: inputOf(b.Value.Input),
				})
			case *types.ContentBlockMemberToolResult:
				i, ok := byID[aws.ToString(b.Value.ToolUseId)]
				if !ok || m.Role != types.ConversationRoleUser {
					continue
				}
				t.Calls[i].Status, t.Calls[i].Output = resultOf(b.Value)
			}
		}
	}
	return t
}

// Load reads the trajectory of a file: a recording (converse -record,
// recording.Recorder) or a session file (converse -session,
// filestore.Store).
func Load(ctx context.Context, path string) (*Trajectory, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("evaltest: %w", err)
	}
	var probe struct {
		Exchanges json.RawMessage `json:"exchanges"`
	}
	if json.NewDecoder(bytes.NewReader(b)).Decode(&probe) == nil && probe.Exchanges != nil {
		rec, err := recording.Read(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("evaltest: %s: %w", path, err)
		}
		return FromRecording(ctx, rec)
	}
	st, err := filestore.Store{Dir: filepath.Dir(path)}.Load(ctx, filepath.Base(path))
	if err != nil {
		return nil, fmt.Errorf("evaltest: %s: neither a recording nor a session file: %w", path, err)
	}
	return FromState(st), nil
}

// FromRecording is the trajectory of a recorded conversation: the history of
// its last model call with that call's answer, and the usage of every call.
// The calls are replayed through the SDK's client, streams assembled as the
// loop assembles them, so they read as the conversation read them.
func FromRecording(ctx context.Context, rec *recording.Recording) (*Trajectory, error) {
	client := recording.NewReplayer(rec, func(o *recording.ReplayOptions) { o.Lenient = true }).Client()
	var (
		msgs  []types.Message
		usage converse.Usage
		model string
	)
	for i, ex := range rec.Exchanges {
		in, err := wirejson.UnmarshalRequest(ex.Request)
		if err != nil {
			return nil, fmt.Errorf("evaltest: exchange %d: %w", i+1, err)
		}
		in.ModelId = aws.String(ex.ModelID)
		out, err := replayOne(ctx, client, ex.Operation, in)
		if err != nil {
			continue // a failed call: the next one sends the same history again
		}
		msgs = in.Messages
		if m, ok := out.Output.(*types.ConverseOutputMemberMessage); ok {
			msgs = append(append([]types.Message(nil), in.Messages...), m.Value)
		}
		usage = usage.Add(usageOf(out.Usage))
		model = ex.ModelID
	}
	t := FromHistory(msgs)
	t.Usage = usage
	t.CostUSD = costOf(model, usage)
	return t, nil
}

// replayOne makes one recorded call with client.
func replayOne(ctx context.Context, client *bedrockruntime.Client, op string, in *bedrockruntime.ConverseInput) (*bedrockruntime.ConverseOutput, error) {
	if op == recording.OpConverse {
		return client.Converse(ctx, in)
	}
	out, err := client.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{
		ModelId: in.ModelId, Messages: in.Messages, System: in.System, ToolConfig: in.ToolConfig,
	})
	if err != nil {
		return nil, err
	}
	return converse.AssembleStream(ctx, out)
}

func usageOf(u *types.TokenUsage) converse.Usage {
	if u == nil {
		return converse.Usage{}
	}
	return converse.Usage{
		InputTokens: int(aws.ToInt32(u.InputTokens)), OutputTokens: int(aws.ToInt32(u.OutputTokens)),
		TotalTokens:          int(aws.ToInt32(u.TotalTokens)),
		CacheReadInputTokens: int(aws.ToInt32(u.CacheReadInputTokens)), CacheWriteInputTokens: int(aws.ToInt32(u.CacheWriteInputTokens)),
	}
}

func costOf(model string, u converse.Usage) float64 {
	p, ok := modelinfo.PricesOf(model)
	if !ok {
		return 0
	}
	return u.Cost(p)
}

// Tools are the names of the tools called, in order.
func (t *Trajectory) Tools() []string {
	names := make([]string, len(t.Calls))
	for i, c := range t.Calls {
		names[i] = c.Tool
	}
	return names
}

// String shows the trajectory one call a line (turn, tool, input, status),
// then the answer and what was spent: what a failure message shows.
func (t *Trajectory) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "trajectory: %d turns, %d tool calls, %d tokens", t.Turns, len(t.Calls), t.Usage.TotalTokens)
	if t.CostUSD > 0 {
		fmt.Fprintf(&b, ", $%.4f", t.CostUSD)
	}
	b.WriteString("\n")
	for _, c := range t.Calls {
		status := c.Status
		if status == "" {
			status = "unanswered"
		}
		fmt.Fprintf(&b, "  turn %d  %s %s  %s", c.Turn, c.Tool, short(string(c.Input), 120), status)
		if c.Status == "error" {
			fmt.Fprintf(&b, ": %s", short(c.Output, 80))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "  answer: %q\n", short(t.Answer, 200))
	return b.String()
}

func textOf(m types.Message) string {
	var parts []string
	for _, b := range m.Content {
		if tb, ok := b.(*types.ContentBlockMemberText); ok {
			parts = append(parts, tb.Value)
		}
	}
	return strings.Join(parts, "")
}

func inputOf(doc interface{ MarshalSmithyDocument() ([]byte, error) }) json.RawMessage {
	if doc == nil {
		return json.RawMessage("{}")
	}
	b, err := doc.MarshalSmithyDocument()
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

func resultOf(r types.ToolResultBlock) (status, output string) {
	var parts []string
	for _, c := range r.Content {
		switch c := c.(type) {
		case *types.ToolResultContentBlockMemberText:
			parts = append(parts, c.Value)
		case *types.ToolResultContentBlockMemberJson:
			parts = append(parts, string(inputOf(c.Value)))
		}
	}
	out := strings.Join(parts, "")
	status = string(r.Status)
	if status == "" {
		status = "success"
		if strings.HasPrefix(out, "Error: ") {
			status = "error"
		}
	}
	return status, out
}

// short cuts s to n runes, marking the cut.
func short(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
