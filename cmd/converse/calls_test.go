package main

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// TestCallFlags: -first-token, -idle, -retries, -hedge and
// -fallback-model make the CallPolicy of the conversations, with their
// defaults, for the default command, serve and eval alike.
func TestCallFlags(t *testing.T) {
	t.Setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "")
	tests := []struct {
		name string
		c    *command
		args []string
		want func(p *converse.CallPolicy)
	}{
		{"defaults", promptCommand, nil, func(*converse.CallPolicy) {}},
		{"stream", promptCommand, []string{"-stream"}, func(p *converse.CallPolicy) { p.FirstToken = 30 * time.Second }},
		{"no deadlines", promptCommand, []string{"-stream", "-first-token", "0", "-idle", "0"}, func(p *converse.CallPolicy) { p.FirstToken, p.Idle = 0, 0 }},
		{"set", promptCommand, []string{"-first-token", "2s", "-idle", "1s", "-retries", "5", "-hedge", "0.95", "-fallback-model", "m2"}, func(p *converse.CallPolicy) {
			p.FirstToken, p.Idle, p.Retries, p.Hedge, p.Fallback = 2*time.Second, time.Second, 5, 0.95, []string{"m2"}
		}},
		{"no retries", promptCommand, []string{"-retries", "0"}, func(p *converse.CallPolicy) { p.Retries = -1 }},
		{"replay is not hedged", promptCommand, []string{"-replay", "r.json", "-hedge", "0.9"}, func(*converse.CallPolicy) {}},
		{"serve", serveCommand, []string{"-stream", "-hedge", "0.5"}, func(p *converse.CallPolicy) { p.FirstToken, p.Hedge = 30*time.Second, 0.5 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.c.parse(tt.args, io.Discard)
			require.NoError(t, err)
			want := &converse.CallPolicy{FirstToken: 5 * time.Minute, Idle: 15 * time.Second, Retries: 2} // the defaults
			tt.want(want)
			assert.Equal(t, want, s.calls)
		})
	}
	t.Run("eval", func(t *testing.T) {
		e, err := parseEvalFlags([]string{"-first-token", "1m", "-hedge", "0.9", "ds.yaml"}, io.Discard)
		require.NoError(t, err)
		assert.Equal(t, &converse.CallPolicy{FirstToken: time.Minute, Idle: 15 * time.Second, Retries: 2, Hedge: 0.9}, e.s.calls)
	})
	for _, args := range [][]string{{"-hedge", "1"}, {"-hedge", "-0.5"}, {"-first-token", "-1s"}, {"-idle", "-1s"}, {"-retries", "-1"}} {
		_, err := promptCommand.parse(args, io.Discard)
		assert.True(t, isUsage(err), "%v: %v", args, err)
	}
}

// TestStallRetryLine drives a session in virtual time against an
// in-process bedrocktest model whose first call stalls: the stall and the
// retry get a line on stderr, and the retry answers. A stream cut after
// its first text marks that text superseded; with -json nothing is
// printed twice.
func TestStallRetryLine(t *testing.T) {
	evalEnv(t)
	stalled := bedrocktest.Text("never")
	stalled.Latency = time.Hour
	cut := bedrocktest.Text("Half")
	cut.StallAfter = 3 // messageStart, contentBlockStart and a delta
	tests := []struct {
		name           string
		args           []string
		first          *bedrocktest.Reply
		stdout, stderr string
	}{
		{"no answer", []string{"-first-token", "30s"}, stalled, "42\n",
			`^converse: turn 1: model stalled \(no answer for 30s\); retry 1 in \d+ms\n$`},
		{"no first token", []string{"-stream"}, stalled, "42\n",
			`^converse: turn 1: model stalled \(no first token for 30s\); retry 1 in \d+ms\n$`},
		{"silent stream", []string{"-stream", "-idle", "5s"}, cut, "Half\n" + supersededLine + "42\n",
			`^converse: turn 1: model stalled \(no event for 5s\); retry 1 in \d+ms\n$`},
		{"stream cut", []string{"-stream"}, &bedrocktest.Reply{Output: cut.Output, DropMessageStop: true}, "Half\n" + supersededLine + "42\n",
			`^converse: turn 1: stream cut \(stream ended before messageStop\); retry 1 in \d+ms\n$`},
		{"trace", []string{"-v", "-first-token", "30s"}, stalled, "42\n",
			`(?m)^· turn 1: model stalled \(no answer for 30s\); retry 1 in \d+ms$`},
		{"json", []string{"-stream", "-json"}, cut, "",
			`^converse: turn 1: model stalled \(no event for 15s\); retry 1 in \d+ms\n$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := promptCommand.parse(append(tt.args, "What is 6 times 7?"), io.Discard)
			require.NoError(t, err)
			var stdout, stderr bytes.Buffer
			synctest.Test(t, func(t *testing.T) {
				srv := bedrocktest.NewInProcessServer(bedrocktest.Script(tt.first, bedrocktest.Text("42")))
				defer srv.Close()
				reg, err := tools.NewRegistry()
				require.NoError(t, err)
				b := &backend{client: srv.Client(), region: "us-east-1", close: func() {}}
				ss, err := newSession(t.Context(), s, nil, reg, b, nil, &stdout, &stderr)
				require.NoError(t, err)
				require.NoError(t, ss.send(t.Context(), "What is 6 times 7?"))
				assert.Len(t, srv.Requests(), 2)
			})
			if s.json {
				assert.NotContains(t, stdout.String(), "Half")
				assert.Contains(t, stdout.String(), `"text": "42"`)
			} else {
				assert.Equal(t, tt.stdout, stdout.String())
			}
			assert.Regexp(t, tt.stderr, stderr.String())
		})
	}
}

// TestStallRetryBinary: the binary, in real time, against a model whose
// first answer comes after a minute: with -first-token 3s the call is made
// again, with its line, and the retry answers. Only the outcome and the
// lines are checked, not the times. The deadline leaves the retry's
// answer seconds to arrive, so a loaded machine does not stall it too.
func TestStallRetryBinary(t *testing.T) {
	t.Parallel()
	slow := bedrocktest.Text("late")
	slow.Latency = time.Minute
	srv := newServer(t, bedrocktest.Script(slow, bedrocktest.Text("6 × 7 = 42.")))
	out := runBinary(t, testEnv(t), nil, "-endpoint", srv.URL, "-first-token", "3s", "What is 6 times 7?")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, "6 × 7 = 42.\n", out.stdout)
	assert.Regexp(t, `^converse: turn 1: model stalled \(no answer for 3s\); retry 1 in \d+ms\n$`, out.stderr)
}

// TestCallLine: the lines of a hedged call and of a stream cut; what the
// transport said is made printable.
func TestCallLine(t *testing.T) {
	line, ok := callLine(converse.Hedged{Turn: 2, Model: "m", After: 1234567 * time.Microsecond})
	assert.True(t, ok)
	assert.Equal(t, "turn 2: no first token after 1.235s; a second request was sent", line)
	line, ok = callLine(converse.ModelRetry{Turn: 1, Retry: 2, Err: fmt.Errorf("read: %w\x1b[2J", converse.ErrStreamTruncated), Wait: 150 * time.Millisecond})
	assert.True(t, ok)
	assert.Equal(t, `turn 1: stream cut ("read: stream ended before messageStop\x1b[2J"); retry 2 in 150ms`, line)
	_, ok = callLine(converse.Text{Text: "hi"})
	assert.False(t, ok)
}
