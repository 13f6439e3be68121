package trace

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"

	"github.com/tooluse/bedrock/converse"
)

// TestTraceLines: the trace's decisions read "approved" or "denied by
// WHO: WHY". An abandoned call is said in its answer's line. A call cut
// off by a crash is said answered without a duration. Counts take the
// singular for one. The library's log records are lines of the trace
// ("· warning: ..."), not slog's text.
func TestTraceLines(t *testing.T) {
	call := converse.Call{ID: "c3", Tool: "risky"}
	tests := []struct {
		name string
		log  func(*Trace)
		want string
	}{
		{"approved", func(tr *Trace) {
			tr.Event(converse.ApprovalDecided{Call: call, Decision: converse.Call{ID: "c3"}.Approve()})
		}, "· risky c3 approved\n"},
		{"denied", func(tr *Trace) {
			tr.Event(converse.ApprovalDecided{Call: call, Decision: converse.Call{ID: "c3"}.Deny("converse", "there is no terminal")})
		}, "· risky c3 denied by converse: there is no terminal\n"},
		{"denied without a reason", func(tr *Trace) {
			tr.Event(converse.ApprovalDecided{Call: call, Decision: converse.Call{ID: "c3"}.Deny("the user", "")})
		}, "· risky c3 denied by the user\n"},
		{"abandoned", func(tr *Trace) {
			tr.Event(converse.ToolEnd{ID: "c3", Name: "risky", Err: errors.New("Error: the call timed out"), Status: types.ToolResultStatusError, Abandoned: true})
		}, "← risky c3 error in 0s: Error: the call timed out (answered before the tool returned; it is being stopped)\n"},
		{"interrupted", func(tr *Trace) {
			tr.Event(converse.ToolEnd{ID: "c3", Name: "risky", Err: converse.ErrCallInterrupted, Status: types.ToolResultStatusError})
		}, "← risky c3 error: " + converse.ErrCallInterrupted.Error() + "\n"},
		{"resumed", func(tr *Trace) {
			tr.Event(converse.Resumed{Messages: 2})
			tr.Event(converse.Resumed{Messages: 1, Decisions: 1})
			tr.Event(converse.Resumed{Messages: 4, Decisions: 2})
		}, "· resuming the session: 2 messages, 0 decisions\n· resuming the session: 1 message, 1 decision\n· resuming the session: 4 messages, 2 decisions\n"},
		{"a warning", func(tr *Trace) {
			slog.New(tr.Handler()).Warn("converse: CountTokens failed; estimating", "error", "throttled")
		}, "· warning: CountTokens failed; estimating error=throttled\n"},
		{"an error with attributes and groups", func(tr *Trace) {
			slog.New(tr.Handler()).With("tool", "risky").WithGroup("call").Error("panic", "stack", "line 1\nline 2", slog.Group("g", "k", "v"))
		}, "· error: panic tool=risky call.stack=\"line 1\\nline 2\" call.g.k=v\n"},
		{"info", func(tr *Trace) {
			slog.New(tr.Handler()).Info("converse: the summary of the trimmed messages failed; dropping them", "error", "x")
		}, "· the summary of the trimmed messages failed; dropping them error=x\n"},
		{"debug is left out", func(tr *Trace) {
			slog.New(tr.Handler()).Debug("details")
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			tt.log(New(&stderr))
			assert.Equal(t, tt.want, stderr.String())
		})
	}
}

// TestTraceHandlerConcurrent: records logged from tools' goroutines beside
// the events are whole lines (run with -race).
func TestTraceHandlerConcurrent(t *testing.T) {
	var stderr bytes.Buffer
	tr := New(&stderr)
	logger := slog.New(tr.Handler())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { logger.Warn("w", "k", "v") })
		wg.Go(func() { tr.Event(converse.ToolStart{ID: "c", Name: "t", Input: []byte("{}")}) })
	}
	wg.Wait()
	for _, line := range strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n") {
		assert.Contains(t, []string{"· warning: w k=v", "→ t c {}"}, line)
	}
}

// TestToolAndTurnLines: a tool's lines name it and its call. They show its
// input and output on one line, capped, and the media it returned, those
// left out with why. A turn's line names its stop reason, tokens and the
// cache's part. A trim says how much it dropped and why.
func TestToolAndTurnLines(t *testing.T) {
	tests := []struct {
		name string
		ev   converse.Event
		want string
	}{
		{"start", converse.ToolStart{ID: "t1", Name: "calc", Input: []byte("{\n  \"a\": 1\n}")}, "→ calc t1 { \"a\": 1 }\n"},
		{"end with media", converse.ToolEnd{ID: "t1", Name: "shot", Output: []byte(`"ok"`), Status: types.ToolResultStatusSuccess, Duration: 1234 * time.Microsecond,
			Media: []converse.MediaInfo{{Type: "image/png", Size: 2048}, {Type: "application/pdf", Size: 10, LeftOut: "model X takes no documents in tool results"}}},
			"← shot t1 success in 1.2ms: \"ok\" [image/png, 2 KiB] [application/pdf, 10 B: left out, model X takes no documents in tool results]\n"},
		{"end long", converse.ToolEnd{ID: "t1", Name: "cat", Output: []byte(strings.Repeat("x", 1000)), Status: types.ToolResultStatusSuccess},
			"← cat t1 success in 0s: " + strings.Repeat("x", 299) + "…\n"},
		{"turn", converse.TurnEnd{Turn: 2, StopReason: types.StopReasonEndTurn, Usage: converse.Usage{InputTokens: 10, OutputTokens: 3, CacheReadInputTokens: 7}},
			"· turn 2: end_turn; tokens 10 in, 3 out, 7 read from the cache, 0 written to it\n"},
		{"trim", converse.Trimmed{Turn: 3, DroppedMessages: 4, ShortenedResults: 1, TokensBefore: 900, TokensAfter: 400},
			"· turn 3: trimmed the history to fit the context window: 4 messages dropped, 1 tool results shortened; about 900 tokens, now 400\n"},
		{"text has no line", converse.Text{Turn: 1, Text: "Hello."}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			New(&out).Event(tt.ev)
			assert.Equal(t, tt.want, out.String())
		})
	}
}
