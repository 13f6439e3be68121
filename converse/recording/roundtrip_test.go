package recording_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
)

// The round trip: these tests record conversations that the real SDK
// client holds with a scripted Server, then replay them in a new Server and
// check that the client sees exactly the same thing.

const e2eModel = "anthropic.claude-3-5-haiku-20241022-v1:0"

// e2eOptions makes SDK retries immediate, so that a recorded throttling
// costs no time.
func e2eOptions(o *bedrockruntime.Options) {
	o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
		so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
	})
}

func e2eToolConfig() *types.ToolConfiguration {
	return &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
		Name:        aws.String("get_current_datetime"),
		Description: aws.String("Returns the current date and time."),
		InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(map[string]any{"type": "object"})},
	}}}}
}

func e2eScript() []*bedrocktest.Reply {
	return []*bedrocktest.Reply{
		bedrocktest.ToolUse("Let me look at the clock.", bedrocktest.Call{ID: "tooluse_clock1", Name: "get_current_datetime"}),
		bedrocktest.Text("It is ten o'clock <sharp> & sunny."),
	}
}

// turnFunc makes one model call with msgs and returns the assistant's
// message (nil if the call ended in an error) and what the client saw, one
// line per item.
type turnFunc func(t *testing.T, client *bedrockruntime.Client, msgs []types.Message) (*types.Message, []string)

func userMessage(text string) types.Message {
	return types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: text}}}
}

// holdConversation asks what time it is, answers a call of
// get_current_datetime with now and returns all that the client saw.
func holdConversation(t *testing.T, client *bedrockruntime.Client, now string, turn turnFunc) []string {
	t.Helper()
	msgs := []types.Message{userMessage("What time is it?")}
	var seen []string
	for range 2 {
		reply, lines := turn(t, client, msgs)
		seen = append(seen, lines...)
		if reply == nil {
			break
		}
		var callID string
		for _, b := range reply.Content {
			if b, ok := b.(*types.ContentBlockMemberToolUse); ok {
				callID = aws.ToString(b.Value.ToolUseId)
			}
		}
		if callID == "" {
			break
		}
		result := types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
			ToolUseId: aws.String(callID),
			Content:   []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: now}},
		}}}}
		msgs = append(msgs, *reply, result)
	}
	return seen
}

func converseTurn(t *testing.T, client *bedrockruntime.Client, msgs []types.Message) (*types.Message, []string) {
	t.Helper()
	out, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String(e2eModel), Messages: msgs, ToolConfig: e2eToolConfig()})
	require.NoError(t, err, "turn %d", len(msgs)/2+1)
	msg := out.Output.(*types.ConverseOutputMemberMessage).Value
	seen := []string{fmt.Sprintf("stop=%s usage=%d/%d/%d", out.StopReason,
		aws.ToInt32(out.Usage.InputTokens), aws.ToInt32(out.Usage.OutputTokens), aws.ToInt32(out.Usage.TotalTokens))}
	for _, b := range msg.Content {
		switch b := b.(type) {
		case *types.ContentBlockMemberText:
			seen = append(seen, fmt.Sprintf("text %q", b.Value))
		case *types.ContentBlockMemberToolUse:
			input, err := b.Value.Input.MarshalSmithyDocument()
			require.NoError(t, err)
			seen = append(seen, fmt.Sprintf("toolUse %s %s %s", aws.ToString(b.Value.ToolUseId), aws.ToString(b.Value.Name), input))
			b.Value.Type = "" // Bedrock refuses it in the history
		default:
			seen = append(seen, fmt.Sprintf("block %T", b))
		}
	}
	return &msg, seen
}

func streamTurn(t *testing.T, client *bedrockruntime.Client, msgs []types.Message) (*types.Message, []string) {
	t.Helper()
	out, err := client.ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{ModelId: aws.String(e2eModel), Messages: msgs, ToolConfig: e2eToolConfig()})
	require.NoError(t, err, "turn %d", len(msgs)/2+1)
	stream := out.GetStream()
	defer stream.Close()
	// Rebuild the assistant message from the events, as a client does.
	msg := &types.Message{Role: types.ConversationRoleAssistant}
	var seen []string
	var text, input strings.Builder
	var use *types.ToolUseBlock
	for ev := range stream.Events() {
		switch ev := ev.(type) {
		case *types.ConverseStreamOutputMemberMessageStart:
			seen = append(seen, "messageStart "+string(ev.Value.Role))
		case *types.ConverseStreamOutputMemberContentBlockStart:
			if s, ok := ev.Value.Start.(*types.ContentBlockStartMemberToolUse); ok {
				seen = append(seen, fmt.Sprintf("start %d toolUse %s %s", aws.ToInt32(ev.Value.ContentBlockIndex), aws.ToString(s.Value.ToolUseId), aws.ToString(s.Value.Name)))
				use = &types.ToolUseBlock{ToolUseId: s.Value.ToolUseId, Name: s.Value.Name}
			}
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			switch d := ev.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				seen = append(seen, fmt.Sprintf("delta %d text %q", aws.ToInt32(ev.Value.ContentBlockIndex), d.Value))
				text.WriteString(d.Value)
			case *types.ContentBlockDeltaMemberToolUse:
				seen = append(seen, fmt.Sprintf("delta %d input %q", aws.ToInt32(ev.Value.ContentBlockIndex), aws.ToString(d.Value.Input)))
				input.WriteString(aws.ToString(d.Value.Input))
			}
		case *types.ConverseStreamOutputMemberContentBlockStop:
			seen = append(seen, fmt.Sprintf("stop %d", aws.ToInt32(ev.Value.ContentBlockIndex)))
			if use != nil {
				var v map[string]any
				require.NoError(t, json.Unmarshal([]byte(input.String()), &v), "tool input %q", input.String())
				use.Input = document.NewLazyDocument(v)
				msg.Content = append(msg.Content, &types.ContentBlockMemberToolUse{Value: *use})
				use = nil
				input.Reset()
			} else {
				msg.Content = append(msg.Content, &types.ContentBlockMemberText{Value: text.String()})
				text.Reset()
			}
		case *types.ConverseStreamOutputMemberMessageStop:
			seen = append(seen, "messageStop "+string(ev.Value.StopReason))
		case *types.ConverseStreamOutputMemberMetadata:
			seen = append(seen, fmt.Sprintf("metadata %d/%d/%d", aws.ToInt32(ev.Value.Usage.InputTokens),
				aws.ToInt32(ev.Value.Usage.OutputTokens), aws.ToInt32(ev.Value.Usage.TotalTokens)))
		}
	}
	if err := stream.Err(); err != nil {
		return nil, append(seen, fmt.Sprintf("error %T: %v", err, err))
	}
	return msg, seen
}

// recordAndReplay holds the conversation with a Server answering with h
// through a Recorder, then saves and loads the recording. It then holds
// the conversation again, at another time, from a strict Replayer in
// process. It holds it once more from a Server replaying it
// (bedrocktest.Replay), which must see the same. It returns the
// recording and what the client saw when recording and replaying.
func recordAndReplay(t *testing.T, h bedrocktest.Handler, turn turnFunc) (rec *recording.Recording, recorded, replayed []string) {
	t.Helper()
	srv := bedrocktest.NewServer(h)
	defer srv.Close()
	recorder := recording.NewRecorder(srv.HTTPClient())
	recorded = holdConversation(t, srv.Client(e2eOptions, func(o *bedrockruntime.Options) { o.HTTPClient = recorder }), "2025-01-01T10:00:00Z", turn)

	rec, err := recording.Read(bytes.NewReader(savedBytes(t, recorder)))
	require.NoError(t, err)
	ignoreClock := func(o *recording.ReplayOptions) { o.IgnoreToolResults = []string{"get_current_datetime"} }

	replayer := recording.NewReplayer(rec, ignoreClock)
	replayed = holdConversation(t, replayer.Client(e2eOptions), "2025-06-30T17:42:09Z", turn)
	assert.NoError(t, replayer.Unused())

	replay := bedrocktest.NewServer(bedrocktest.ReplayT(t, rec, ignoreClock))
	defer replay.Close()
	served := holdConversation(t, replay.Client(e2eOptions), "2025-06-30T17:42:09Z", turn)
	assert.Equal(t, replayed, served, "bedrocktest.Replay served (actual), the Replayer (expected)")
	return rec, recorded, replayed
}

func checkSameConversation(t *testing.T, recorded, replayed []string) {
	t.Helper()
	assert.Equal(t, recorded, replayed, "the replay differs from the recorded conversation")
}

func exchangeSummary(rec *recording.Recording) []string {
	var out []string
	for _, x := range rec.Exchanges {
		s := fmt.Sprintf("%s %s %d", x.Operation, x.ModelID, x.Status)
		if x.ErrorType != "" {
			s += " " + x.ErrorType
		}
		if len(x.Events) > 0 {
			s += fmt.Sprintf(" %s…%s", x.Events[0].Type, x.Events[len(x.Events)-1].Type)
		}
		out = append(out, s)
	}
	return out
}

func TestRecordReplayConverse(t *testing.T) {
	// The first call is throttled: the SDK's retry is recorded and replayed.
	rec, recorded, replayed := recordAndReplay(t, bedrocktest.Throttle(1, bedrocktest.Script(e2eScript()...)), converseTurn)

	want := []string{
		"stop=tool_use usage=10/5/15",
		`text "Let me look at the clock."`,
		"toolUse tooluse_clock1 get_current_datetime {}",
		"stop=end_turn usage=10/5/15",
		`text "It is ten o'clock <sharp> & sunny."`,
	}
	assert.Equal(t, want, recorded, "recorded conversation")
	checkSameConversation(t, recorded, replayed)
	wantExchanges := []string{
		"Converse " + e2eModel + " 429 ThrottlingException",
		"Converse " + e2eModel + " 200",
		"Converse " + e2eModel + " 200",
	}
	assert.Equal(t, wantExchanges, exchangeSummary(rec), "exchanges")
}

func TestRecordReplayConverseStream(t *testing.T) {
	script := e2eScript()
	last := script[len(script)-1]
	last.Chunk = 5
	last.Exception = &bedrocktest.Exception{Type: "modelStreamErrorException", Message: "the model stopped midway"}
	last.ExceptionAfter = 4
	rec, recorded, replayed := recordAndReplay(t, bedrocktest.Script(script...), streamTurn)

	require.GreaterOrEqual(t, len(recorded), 10, "recorded conversation: %q", recorded)
	assert.True(t, strings.HasPrefix(recorded[len(recorded)-1], "error *types.ModelStreamErrorException: "),
		"recorded conversation does not end in the exception:\n  %s", strings.Join(recorded, "\n  "))
	checkSameConversation(t, recorded, replayed)
	wantExchanges := []string{
		"ConverseStream " + e2eModel + " 200 messageStart…metadata",
		"ConverseStream " + e2eModel + " 200 messageStart…modelStreamErrorException",
	}
	assert.Equal(t, wantExchanges, exchangeSummary(rec), "exchanges")
}

// A strict replay turns a conversation that went another way into a
// ValidationException saying where, and so does a call too many, both from
// the Replayer in process and from a bedrocktest Server.
func TestReplayThroughSDKClient(t *testing.T) {
	srv := bedrocktest.NewServer(bedrocktest.Script(e2eScript()...))
	defer srv.Close()
	recorder := recording.NewRecorder(srv.HTTPClient())
	holdConversation(t, srv.Client(func(o *bedrockruntime.Options) { o.HTTPClient = recorder }), "10:00", converseTurn)

	t.Run("Replayer", func(t *testing.T) {
		checkStrictReplay(t, recording.NewReplayer(recorder.Recording()).Client())
	})
	t.Run("bedrocktest.Replay", func(t *testing.T) {
		replay := bedrocktest.NewServer(bedrocktest.Replay(recorder.Recording()))
		defer replay.Close()
		checkStrictReplay(t, replay.Client())
	})
}

func checkStrictReplay(t *testing.T, client *bedrockruntime.Client) {
	ctx := context.Background()

	_, err := client.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(e2eModel), Messages: []types.Message{userMessage("What day is it?")}, ToolConfig: e2eToolConfig()})
	var invalid *types.ValidationException
	require.ErrorAs(t, err, &invalid)
	assert.Equal(t, "recording: replay: request 1 differs from the recording:\n"+
		`  messages[0].content[0].text: want "What time is it?", got "What day is it?"`, aws.ToString(invalid.Message))

	// Request 2 gets exchange 2, a Converse call: asking for a stream instead
	// is refused.
	_, err = client.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: aws.String(e2eModel), Messages: []types.Message{userMessage("What time is it?")}})
	require.ErrorAs(t, err, &invalid, "the operation mismatch")
	assert.Contains(t, aws.ToString(invalid.Message), "request 2 is ConverseStream but exchange 2 of the recording is Converse")

	_, err = client.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(e2eModel), Messages: []types.Message{userMessage("What time is it?")}})
	require.ErrorAs(t, err, &invalid, "the exhausted recording")
	assert.Equal(t, "recording: replay: request 3 but the recording has 2 exchanges", aws.ToString(invalid.Message))
}
