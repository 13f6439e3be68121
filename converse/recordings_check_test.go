package converse_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/converse/wirejson"
)

// checkOutcome compares what the conversation did with what the scenario
// says: the last Send's result or error, every tool call with its input and
// outcome, and for a stream the message assembled from the events.
func checkOutcome(t *testing.T, sc scenario, p *played) {
	t.Helper()
	if sc.err != nil {
		require.ErrorIs(t, p.err, sc.err)
		assert.Greater(t, len(p.conv.History()), p.before, "a failed Send keeps its prompt and every completed tool exchange")
		assertValid(t, p.conv, sc.model)
	} else {
		require.NoError(t, p.err)
		assertValid(t, p.conv, sc.model)
	}
	require.NotNil(t, p.res)
	assert.Equal(t, sc.text, p.res.Text)
	assert.Equal(t, sc.stop, p.res.StopReason)
	assert.Equal(t, sc.turns, p.res.Turns)

	assert.Len(t, p.starts, len(sc.calls), "tool calls started")
	assert.Len(t, p.ends, len(sc.calls), "tool calls answered")
	for _, want := range sc.calls {
		start, end := p.starts[want.id], p.ends[want.id]
		assert.Equal(t, want.name, start.Name, want.id)
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, []byte(want.input)))
		assert.Equal(t, compact.String(), string(start.Input), "%s: the tool gets the input, compact", want.id)
		if want.failure == "" {
			assert.NoError(t, end.Err, want.id)
			assert.Equal(t, types.ToolResultStatusSuccess, end.Status, want.id)
			assert.JSONEq(t, want.output, string(end.Output), want.id)
			continue
		}
		assert.Equal(t, types.ToolResultStatusError, end.Status, want.id)
		if want.errIs != nil {
			assert.ErrorIs(t, end.Err, want.errIs, want.id)
		}
	}

	if sc.assembled != "" {
		require.Greater(t, len(p.res.History), p.before+1)
		got, err := wirejson.MarshalMessages(p.res.History[p.before+1 : p.before+2])
		require.NoError(t, err)
		assert.JSONEq(t, "["+sc.assembled+"]", string(got), "the assembled assistant message")
	}
}

// checkRequests holds the requests the loop sent to the rules of a tool-use
// loop, whatever the recording says. Every request has a toolConfig. The calls
// of an assistant message are answered in the next message, a user message of
// toolResults only, one per call, by id and in order. Each result holds what
// the tool gave or, for a failure, the error the model reads.
func checkRequests(t *testing.T, sc scenario, reqs []*bedrocktest.Request) {
	t.Helper()
	sent := map[string]result{}
	for i, req := range reqs {
		assert.NotNil(t, req.ToolConfig, "request %d has no toolConfig", i+1)
		msgs := req.Messages
		if len(msgs) < 3 || msgs[len(msgs)-2].Role != types.ConversationRoleAssistant {
			continue
		}
		var ids []string
		for _, b := range msgs[len(msgs)-2].Content {
			if tu, ok := b.(*types.ContentBlockMemberToolUse); ok && tu.Value.ToolUseId != nil {
				ids = append(ids, *tu.Value.ToolUseId)
			}
		}
		if ids == nil {
			continue
		}
		var answered []string
		for _, r := range results(t, msgs[len(msgs)-1].Content) {
			answered = append(answered, r.ID)
			sent[r.ID] = r
		}
		assert.Equal(t, ids, answered, "request %d: the calls answered by id, in order", i+1)
	}
	for _, want := range sc.calls {
		r, ok := sent[want.id]
		if !assert.True(t, ok, "no toolResult for %s", want.id) {
			continue
		}
		status := types.ToolResultStatusSuccess
		if want.failure != "" {
			status = types.ToolResultStatusError
			assert.True(t, strings.HasPrefix(r.Text, "Error: "), r.Text)
			assert.Contains(t, r.Text, want.failure)
		} else {
			assert.JSONEq(t, want.output, r.Text, want.id)
		}
		if sc.noStatus {
			status = ""
		}
		assert.Equal(t, status, r.Status, want.id)
	}
}

// recordedUsage sums the token counts of a recording's responses.
func recordedUsage(t *testing.T, rec *recording.Recording) converse.Usage {
	t.Helper()
	var total converse.Usage
	add := func(raw json.RawMessage) {
		var body struct {
			Usage converse.Usage `json:"usage"` // the same names, matched without case
		}
		require.NoError(t, json.Unmarshal(raw, &body))
		total = total.Add(body.Usage)
	}
	for _, x := range rec.Exchanges {
		if x.Operation == recording.OpConverse && x.Status == 200 {
			add(x.Response)
		}
		for _, ev := range x.Events {
			if ev.Type == "metadata" {
				add(ev.Payload)
			}
		}
	}
	return total
}

// isCLIRecording reports whether file is the recording of the CLI's demo
// (make demo), which no scenario replays.
func isCLIRecording(file string) bool {
	return filepath.Base(file) == "demo.json"
}

// TestRecordingsAreCovered makes sure no recording in testdata/ lies there
// unreplayed. It also makes sure the eight conversations the library must be
// tested with are there. They are one tool call, two, an error, an unknown
// tool, several rounds, a multi-turn chat, the turn limit and max_tokens mid
// tool call.
func TestRecordingsAreCovered(t *testing.T) {
	names := map[string]bool{}
	for _, sc := range scenarios {
		require.False(t, names[sc.name], "two scenarios named %s", sc.name)
		names[sc.name] = true
	}
	files, err := filepath.Glob(filepath.Join(recordingsDir, "*.json"))
	require.NoError(t, err)
	for _, f := range files {
		if isCLIRecording(f) {
			continue
		}
		assert.True(t, names[strings.TrimSuffix(filepath.Base(f), ".json")], "%s is replayed by no scenario", f)
	}
	for _, name := range []string{"tool-one", "tool-two-calculators", "tool-error-recovery", "tool-unknown",
		"tool-rounds", "chat-multi-turn", "turn-limit", "max-tokens-tool-call"} {
		assert.True(t, names[name], "no recording of %s", name)
	}
}

// awsKeyID matches long-term and temporary AWS access key IDs.
var awsKeyID = regexp.MustCompile(`\b(AKIA|ASIA)[A-Z0-9]{16}\b`)

// TestRecordingsHoldNoCredentials checks every recording in testdata/, the
// CLI's included, for what a request's headers would have leaked.
func TestRecordingsHoldNoCredentials(t *testing.T) {
	srv := bedrocktest.NewServer(bedrocktest.Script())
	creds, err := srv.Config().Credentials.Retrieve(t.Context())
	srv.Close()
	require.NoError(t, err)

	files, err := filepath.Glob(filepath.Join(recordingsDir, "*.json"))
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		s, lower := string(b), strings.ToLower(string(b))
		for _, secret := range []string{creds.AccessKeyID, creds.SecretAccessKey, "AKID"} {
			assert.NotContains(t, s, secret, f)
		}
		for _, header := range []string{"authorization", "x-amz-", "signature=", "credential="} {
			assert.NotContains(t, lower, header, f)
		}
		assert.Empty(t, awsKeyID.FindAllString(s, -1), f)
	}
}
