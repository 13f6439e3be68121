package bedrocktest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/recording"
)

// streamed is what a client assembles from a ConverseStream.
type streamed struct {
	events     []types.ConverseStreamOutput
	texts      map[int32]string
	reasoning  map[int32]string
	signatures map[int32]string
	toolInput  map[int32]string
	toolStarts map[int32]types.ToolUseBlockStart
	deltas     map[int32]int
	stop       types.StopReason
	usage      *types.TokenUsage
	err        error
}

func converseStream(t *testing.T, client *bedrockruntime.Client, in *bedrockruntime.ConverseStreamInput) *streamed {
	t.Helper()
	out, err := client.ConverseStream(context.Background(), in)
	require.NoError(t, err)
	stream := out.GetStream()
	defer stream.Close()
	s := &streamed{
		texts: map[int32]string{}, reasoning: map[int32]string{}, signatures: map[int32]string{},
		toolInput: map[int32]string{}, toolStarts: map[int32]types.ToolUseBlockStart{}, deltas: map[int32]int{},
	}
	for ev := range stream.Events() {
		s.events = append(s.events, ev)
		switch v := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockStart:
			if tu, ok := v.Value.Start.(*types.ContentBlockStartMemberToolUse); ok {
				s.toolStarts[aws.ToInt32(v.Value.ContentBlockIndex)] = tu.Value
			}
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			i := aws.ToInt32(v.Value.ContentBlockIndex)
			s.deltas[i]++
			switch d := v.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				s.texts[i] += d.Value
			case *types.ContentBlockDeltaMemberToolUse:
				s.toolInput[i] += aws.ToString(d.Value.Input)
			case *types.ContentBlockDeltaMemberReasoningContent:
				switch r := d.Value.(type) {
				case *types.ReasoningContentBlockDeltaMemberText:
					s.reasoning[i] += r.Value
				case *types.ReasoningContentBlockDeltaMemberSignature:
					s.signatures[i] += r.Value
				}
			}
		case *types.ConverseStreamOutputMemberMessageStop:
			s.stop = v.Value.StopReason
		case *types.ConverseStreamOutputMemberMetadata:
			s.usage = v.Value.Usage
		case *types.UnknownUnionMember:
			assert.Fail(t, "unknown event", v.Tag)
		}
	}
	s.err = stream.Err()
	return s
}

// streamOnce serves reply to one ConverseStream call and returns what the
// client assembled.
func streamOnce(t *testing.T, reply *Reply) *streamed {
	t.Helper()
	srv := NewServer(Script(reply))
	defer srv.Close()
	return converseStream(t, srv.Client(), streamInput(userText("hi")))
}

func streamInput(msgs ...types.Message) *bedrockruntime.ConverseStreamInput {
	return &bedrockruntime.ConverseStreamInput{ModelId: aws.String(testModel), Messages: msgs}
}

func TestStreamText(t *testing.T) {
	srv := NewServer(Script(Text("The quick brown fox jumps over the lazy dog.")))
	defer srv.Close()
	s := converseStream(t, srv.Client(), streamInput(userText("hi")))
	require.NoError(t, s.err)
	assert.Equal(t, "The quick brown fox jumps over the lazy dog.", s.texts[0])
	assert.True(t, s.deltas[0] > 5, "text arrives in several deltas", s.deltas[0])
	assert.Equal(t, types.StopReasonEndTurn, s.stop)
	require.True(t, s.usage != nil, "metadata with usage")
	assert.Equal(t, int32(15), aws.ToInt32(s.usage.TotalTokens))
	_, first := s.events[0].(*types.ConverseStreamOutputMemberMessageStart)
	assert.True(t, first, "messageStart first")
	for _, ev := range s.events {
		_, start := ev.(*types.ConverseStreamOutputMemberContentBlockStart)
		assert.False(t, start, "a text block has no contentBlockStart")
	}
	assert.Equal(t, recording.OpConverseStream, srv.Requests()[0].Operation)
}

func TestStreamToolUse(t *testing.T) {
	srv := NewServer(Script(ToolUse("Checking.",
		Call{ID: "tooluse_a", Name: "get_weather", Input: map[string]any{"city": "Paris, France"}},
		Call{ID: "tooluse_b", Name: "get_weather", Input: map[string]any{"city": "Lyon"}},
	)))
	defer srv.Close()
	in := streamInput(userText("weather?"))
	in.ToolConfig = weatherTools()
	s := converseStream(t, srv.Client(), in)
	require.NoError(t, s.err)
	assert.Equal(t, "Checking.", s.texts[0])
	assert.Equal(t, "tooluse_a", aws.ToString(s.toolStarts[1].ToolUseId))
	assert.Equal(t, "get_weather", aws.ToString(s.toolStarts[1].Name))
	assert.Equal(t, `{"city":"Paris, France"}`, s.toolInput[1])
	assert.True(t, s.deltas[1] > 3, "tool input arrives in fragments", s.deltas[1])
	assert.Equal(t, "tooluse_b", aws.ToString(s.toolStarts[2].ToolUseId))
	assert.Equal(t, `{"city":"Lyon"}`, s.toolInput[2])
	assert.Equal(t, types.StopReasonToolUse, s.stop)
}

func TestStreamReasoning(t *testing.T) {
	reply := Output(types.StopReasonEndTurn,
		&types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{
			Value: types.ReasoningTextBlock{Text: aws.String("Think, then answer."), Signature: aws.String("sig-123")},
		}},
		&types.ContentBlockMemberText{Value: "42"},
	)
	reply.Chunk = 5
	s := streamOnce(t, reply)
	require.NoError(t, s.err)
	assert.Equal(t, "Think, then answer.", s.reasoning[0])
	assert.Equal(t, "sig-123", s.signatures[0])
	assert.Equal(t, "42", s.texts[1])
}

func TestStreamPaddingIgnored(t *testing.T) {
	s := streamOnce(t, Text("hello"))
	require.NoError(t, s.err)
	assert.Equal(t, "hello", s.texts[0])
	events, err := streamEvents(Text("hello"))
	require.NoError(t, err)
	for _, ev := range events {
		assert.Contains(t, string(ev.Payload), `"p":"`, ev.Type)
	}
}

func TestStreamRecordedEvents(t *testing.T) {
	events := []recording.Event{
		{Type: "messageStart", Payload: []byte(`{"p":"abc","role":"assistant"}`)},
		{Type: "contentBlockDelta", Payload: []byte(`{"contentBlockIndex":0,"delta":{"text":"Hi"},"p":"abcdefgh"}`)},
		{Type: "contentBlockStop", Payload: []byte(`{"contentBlockIndex":0,"p":"ab"}`)},
		{Type: "messageStop", Payload: []byte(`{"p":"abcdef","stopReason":"end_turn"}`)},
	}
	s := streamOnce(t, &Reply{Events: events})
	require.NoError(t, s.err)
	assert.Equal(t, "Hi", s.texts[0])
	assert.Equal(t, types.StopReasonEndTurn, s.stop)
	assert.Len(t, s.events, 4)
}

func TestStreamInterval(t *testing.T) {
	reply := Text("abcdefgh")
	reply.Interval = 10 * time.Millisecond
	srv := NewServer(Script(reply))
	defer srv.Close()
	start := time.Now()
	s := converseStream(t, srv.Client(), streamInput(userText("hi")))
	require.NoError(t, s.err)
	// messageStart, 2 deltas, stop, messageStop, metadata: 5 pauses.
	assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond, "the stream's 5 pauses")
	assert.Equal(t, "abcdefgh", s.texts[0])
}

func TestStreamUnicodeChunks(t *testing.T) {
	text := strings.Repeat("héllo wörld ✓ ", 3)
	s := streamOnce(t, Text(text))
	require.NoError(t, s.err)
	assert.Equal(t, text, s.texts[0])
}

// TestStreamModelRejection: a stream's request that the model rejects is
// answered after the stream's 200, in a validationException frame. A
// captured ConverseStream of Nova Lite with text for a png shows this. One
// that Bedrock itself rejects is a 400, as for Converse.
func TestStreamModelRejection(t *testing.T) {
	srv := NewServer(Script(Text("unused")))
	defer srv.Close()
	img := &types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatPng, Source: &types.ImageSourceMemberBytes{Value: []byte("not an image at all")}}}
	in := &bedrockruntime.ConverseStreamInput{ModelId: aws.String("us.amazon.nova-lite-v1:0"),
		Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "what is this?"}, img}}}}
	s := converseStream(t, srv.Client(), in)
	var ve *types.ValidationException
	require.ErrorAs(t, s.err, &ve)
	assert.Equal(t, "The model returned the following errors: The detected file MIME type text/plain does not match the expected type image/png. Reformat your input and try again.", ve.ErrorMessage())
	assert.Empty(t, s.events)

	in.Messages = nil
	_, err := srv.Client().ConverseStream(context.Background(), in)
	require.ErrorAs(t, err, &ve, "Bedrock's own check: before the stream")
}
