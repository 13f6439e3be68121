package filestore_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/filestore"
)

var update = flag.Bool("update", false, "write the golden files of testdata/ anew")

// TestSessionLogGolden: the files a Store writes for a fixed series of
// saves are those of testdata/session-v1.txt (the file after each save) and
// session-v1-open.log. -update writes them. Each reads back as the state
// last saved. The saves cover records with and without messages, and an
// open turn pending, answered and in part answered. They cover the
// rewrites after dropped messages and when half the file is superseded.
// They cover text the JSON form escapes (<, >, &).
func TestSessionLogGolden(t *testing.T) {
	store := filestore.Store{Dir: t.TempDir()}
	ctx := context.Background()
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	msg := func(role types.ConversationRole, blocks ...types.ContentBlock) types.Message {
		return types.Message{Role: role, Content: blocks}
	}
	text := func(s string) types.ContentBlock { return &types.ContentBlockMemberText{Value: s} }
	long := func(s string) string { return strings.Repeat(s+" ", 400/len(s)) } // so that records are worth appending
	turn := func(i int, reason types.StopReason) converse.TurnRecord {
		return converse.TurnRecord{End: at.Add(time.Duration(i) * time.Second), Duration: 1500 * time.Millisecond, StopReason: reason,
			Usage: converse.Usage{InputTokens: 10 * i, OutputTokens: i, TotalTokens: 11 * i}}
	}
	st := &converse.State{ModelID: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", Messages: []types.Message{
		msg(types.ConversationRoleUser, text(long("hi"))),
		msg(types.ConversationRoleAssistant, text(long("hello"))),
	}, Usage: converse.Usage{InputTokens: 10, OutputTokens: 1, TotalTokens: 11}, Turns: map[int]converse.TurnRecord{1: turn(1, types.StopReasonEndTurn)}}
	steps := []struct {
		name string
		do   func()
	}{
		{"whole", func() {}},
		{"a record with an open turn pending", func() {
			st.Messages = append(st.Messages, msg(types.ConversationRoleUser, text(long("echo it"))),
				msg(types.ConversationRoleAssistant, text("Echoing."), &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: aws.String("t1"), Name: aws.String("echo"), Input: document.NewLazyDocument(map[string]any{"text": "x"})}}))
			st.Pending = []converse.Call{{ID: "t1", Tool: "echo", Input: json.RawMessage(`{"text":"<x>"}`)}}
			st.Usage = converse.Usage{InputTokens: 40, OutputTokens: 4, TotalTokens: 44}
			st.Turns[3] = turn(3, types.StopReasonToolUse)
		}},
		{"a record answering the turn", func() {
			st.Pending = nil
			st.Messages = append(st.Messages, msg(types.ConversationRoleUser, &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
				ToolUseId: aws.String("t1"), Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "x"}}}}),
				msg(types.ConversationRoleAssistant, text(long("Done."))))
			st.ToolCalls = 1
			rec := turn(3, types.StopReasonToolUse)
			rec.Calls = map[string]converse.CallRecord{"t1": {Start: at.Add(4 * time.Second), End: at.Add(5 * time.Second), Verdict: converse.Approved, By: "the user"}}
			st.Turns[3], st.Turns[5] = rec, turn(6, types.StopReasonEndTurn)
		}},
		{"written whole, not a record of no messages: half the file superseded", func() { st.Stopped = true }},
		{"written whole: the first prompt and answer dropped", func() {
			st.Messages = st.Messages[2:]
			st.Turns = map[int]converse.TurnRecord{1: st.Turns[3], 3: st.Turns[5]}
		}},
		{"a record of no messages", func() { st.Usage.OutputTokens++ }},
		{"a record", func() { st.Usage.OutputTokens++ }},
		{"a record", func() { st.Usage.OutputTokens++ }},
		{"written whole: half the file superseded", func() { st.Usage.OutputTokens++ }},
		{"a record", func() { st.Usage.OutputTokens++ }},
	}
	var transcript strings.Builder
	for i, step := range steps {
		step.do()
		require.NoError(t, store.Save(ctx, "s", st), "save %d", i)
		require.Equal(t, int64(i+1), st.Revision)
		b, err := os.ReadFile(filepath.Join(store.Dir, "s"))
		require.NoError(t, err)
		fmt.Fprintf(&transcript, "-- save %d: %s --\n%s", i+1, step.name, b)
	}
	sessionGolden(t, transcript.String(), "testdata/session-v1.txt")
	got, err := store.Load(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, int64(len(steps)), got.Revision)
	assert.Equal(t, jsonOf(t, st), jsonOf(t, got))

	old, err := os.ReadFile("../testdata/state-v1.json")
	require.NoError(t, err)
	open := &converse.State{}
	require.NoError(t, json.Unmarshal(old, open))
	open.Messages = append([]types.Message{msg(types.ConversationRoleUser, text(long("before <b>&</b>"))), msg(types.ConversationRoleAssistant, text(long("after")))}, open.Messages...)
	for range 2 {
		require.NoError(t, store.Save(ctx, "open", open))
		open.Usage.OutputTokens++
	}
	open.Usage.OutputTokens--
	b, err := os.ReadFile(filepath.Join(store.Dir, "open"))
	require.NoError(t, err)
	sessionGolden(t, string(b), "testdata/session-v1-open.log")
	got, err = store.Load(ctx, "open")
	require.NoError(t, err)
	assert.Equal(t, int64(2), got.Revision)
	assert.Equal(t, jsonOf(t, open), jsonOf(t, got))
}

// sessionGolden compares got with the golden file, or with -update writes
// it.
func sessionGolden(t *testing.T, got, golden string) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "write it with -update")
	assert.Equal(t, string(want), got)
}

// jsonOf is the JSON form of st.
func jsonOf(t *testing.T, st *converse.State) string {
	t.Helper()
	b, err := json.Marshal(st)
	require.NoError(t, err)
	return string(b)
}
