package main

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"

	"github.com/tooluse/bedrock/converse"
)

// TestTraceLines: the -v trace's decisions read "approved" or "denied by
// WHO: WHY", an abandoned call is said after its answer, a call cut off by
// a crash is said answered without a duration, counts take the singular
// for one, and the library's
// log records are lines of the trace ("· warning: ..."), not slog's text.
func TestTraceLines(t *testing.T) {
	call := converse.Call{ID: "c3", Tool: "risky"}
	tests := []struct {
		name string
		log  func(*printer)
		want string
	}{
		{"approved", func(p *printer) {
			p.event(converse.ApprovalDecided{Call: call, Decision: converse.Approve("c3")})
		}, "· risky c3 approved\n"},
		{"denied", func(p *printer) {
			p.event(converse.ApprovalDecided{Call: call, Decision: converse.Deny("c3", "converse", "there is no terminal")})
		}, "· risky c3 denied by converse: there is no terminal\n"},
		{"denied without a reason", func(p *printer) {
			p.event(converse.ApprovalDecided{Call: call, Decision: converse.Deny("c3", "the user", "")})
		}, "· risky c3 denied by the user\n"},
		{"abandoned", func(p *printer) {
			p.event(converse.ToolEnd{ID: "c3", Name: "risky", Err: errors.New("Error: the call timed out"), Status: types.ToolResultStatusError, Abandoned: true})
		}, "← risky c3 error in 0s: Error: the call timed out\n· risky c3 abandoned: the tool has not returned yet; it keeps its concurrency slot\n"},
		{"interrupted", func(p *printer) {
			p.event(converse.ToolEnd{ID: "c3", Name: "risky", Err: converse.ErrCallInterrupted, Status: types.ToolResultStatusError})
		}, "← risky c3 error: " + converse.ErrCallInterrupted.Error() + "\n"},
		{"resumed", func(p *printer) {
			p.event(converse.Resumed{Messages: 2})
			p.event(converse.Resumed{Messages: 1, Decisions: 1})
			p.event(converse.Resumed{Messages: 4, Decisions: 2})
		}, "· resuming the session: 2 messages, 0 decisions\n· resuming the session: 1 message, 1 decision\n· resuming the session: 4 messages, 2 decisions\n"},
		{"a warning", func(p *printer) {
			slog.New(&traceHandler{p: p}).Warn("converse: tool call answered as timed out or cancelled", "tool", "risky", "toolUseId", "c3", "abandoned", 1)
		}, "· warning: tool call answered as timed out or cancelled tool=risky toolUseId=c3 abandoned=1\n"},
		{"an error with attributes and groups", func(p *printer) {
			slog.New(&traceHandler{p: p}).With("tool", "risky").WithGroup("call").Error("panic", "stack", "line 1\nline 2", slog.Group("g", "k", "v"))
		}, "· error: panic tool=risky call.stack=\"line 1\\nline 2\" call.g.k=v\n"},
		{"info", func(p *printer) {
			slog.New(&traceHandler{p: p}).Info("converse: an abandoned tool call returned", "tool", "risky")
		}, "· an abandoned tool call returned tool=risky\n"},
		{"debug is left out", func(p *printer) {
			slog.New(&traceHandler{p: p}).Debug("details")
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			tt.log(&printer{stdout: &bytes.Buffer{}, stderr: &stderr, verbose: true})
			assert.Equal(t, tt.want, stderr.String())
		})
	}
}

// TestTraceHandlerConcurrent: records logged from tools' goroutines beside
// the events are whole lines (run with -race).
func TestTraceHandlerConcurrent(t *testing.T) {
	var stderr bytes.Buffer
	p := &printer{stdout: &bytes.Buffer{}, stderr: &stderr, verbose: true}
	logger := slog.New(&traceHandler{p: p})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { logger.Warn("w", "k", "v") })
		wg.Go(func() { p.event(converse.ToolStart{ID: "c", Name: "t", Input: []byte("{}")}) })
	}
	wg.Wait()
	for _, line := range strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n") {
		assert.Contains(t, []string{"· warning: w k=v", "→ t c {}"}, line)
	}
}
