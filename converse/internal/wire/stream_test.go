package wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/schemas"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithy "github.com/aws/smithy-go"
	"github.com/aws/smithy-go/transport/http/protocol/restjson1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func answer() *bedrockruntime.ConverseOutput {
	return &bedrockruntime.ConverseOutput{
		Output: &types.ConverseOutputMemberMessage{Value: types.Message{
			Role: types.ConversationRoleAssistant,
			Content: []types.ContentBlock{
				&types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{
					Value: types.ReasoningTextBlock{Text: aws.String("hmm, weather"), Signature: aws.String("sig")},
				}},
				&types.ContentBlockMemberText{Value: "Checking now"},
				&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: aws.String("t1"), Name: aws.String("get_weather"),
					Input: document.NewLazyDocument(map[string]any{"city": "Paris"}),
				}},
			},
		}},
		StopReason: types.StopReasonToolUse,
		Usage:      &types.TokenUsage{InputTokens: aws.Int32(10), OutputTokens: aws.Int32(5), TotalTokens: aws.Int32(15)},
		Metrics:    &types.ConverseMetrics{LatencyMs: aws.Int64(7)},
	}
}

// readEvents decodes a stream the way the SDK client does: with the
// restJson1 event stream codec and the service's type registry.
func readEvents(t *testing.T, r io.Reader) ([]smithy.Deserializable, error) {
	t.Helper()
	p := restjson1.New(nil)
	var evs []smithy.Deserializable
	for {
		ev, err := p.DeserializeEventMessage(schemas.ConverseStreamOutput, bedrockruntime.TypeRegistry, r)
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestStreamEvents(t *testing.T) {
	events, err := StreamEvents(answer(), 5)
	require.NoError(t, err)
	var typesSeen []string
	var stream bytes.Buffer
	for _, ev := range events {
		typesSeen = append(typesSeen, ev.Type)
		assert.Contains(t, string(ev.Payload), `"p":"`, "%s payload has no padding", ev.Type)
		require.NoError(t, WriteEventFrame(&stream, ev.Type, ev.Payload))
	}
	want := []string{
		"messageStart",
		"contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockStop",
		"contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockStop",
		"contentBlockStart", "contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockStop",
		"messageStop", "metadata",
	}
	assert.Equal(t, want, typesSeen, "event types")

	decoded, err := readEvents(t, &stream)
	require.NoError(t, err)
	require.Len(t, decoded, len(events), "decoded events")
	texts := map[int32]string{}
	var signature string
	var start *types.ToolUseBlockStart
	var stop types.StopReason
	var usage *types.TokenUsage
	for _, d := range decoded {
		switch v := d.(type) {
		case *types.MessageStartEvent:
			assert.Equal(t, types.ConversationRoleAssistant, v.Role, "role")
		case *types.ContentBlockStartEvent:
			s := v.Start.(*types.ContentBlockStartMemberToolUse).Value
			start = &s
		case *types.ContentBlockDeltaEvent:
			i := aws.ToInt32(v.ContentBlockIndex)
			switch dv := v.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				texts[i] += dv.Value
			case *types.ContentBlockDeltaMemberToolUse:
				texts[i] += aws.ToString(dv.Value.Input)
			case *types.ContentBlockDeltaMemberReasoningContent:
				switch r := dv.Value.(type) {
				case *types.ReasoningContentBlockDeltaMemberText:
					texts[i] += r.Value
				case *types.ReasoningContentBlockDeltaMemberSignature:
					signature = r.Value
				}
			}
		case *types.ContentBlockStopEvent:
		case *types.MessageStopEvent:
			stop = v.StopReason
		case *types.ConverseStreamMetadataEvent:
			usage = v.Usage
			if assert.NotNil(t, v.Metrics, "metrics") {
				assert.Equal(t, int64(7), aws.ToInt64(v.Metrics.LatencyMs), "latency")
			}
		default:
			assert.Fail(t, "unexpected event", "%T", d)
		}
	}
	wantTexts := map[int32]string{0: "hmm, weather", 1: "Checking now", 2: `{"city":"Paris"}`}
	assert.Equal(t, wantTexts, texts, "assembled")
	assert.Equal(t, "sig", signature, "signature")
	if assert.NotNil(t, start, "tool start") {
		assert.Equal(t, "t1", aws.ToString(start.ToolUseId), "tool start")
		assert.Equal(t, "get_weather", aws.ToString(start.Name), "tool start")
	}
	assert.Equal(t, types.StopReasonToolUse, stop, "stop")
	if assert.NotNil(t, usage, "usage") {
		assert.Equal(t, int32(15), aws.ToInt32(usage.TotalTokens), "usage")
	}
}

func TestStreamEventsRedacted(t *testing.T) {
	out := answer()
	out.Output = &types.ConverseOutputMemberMessage{Value: types.Message{Role: "assistant", Content: []types.ContentBlock{
		&types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{Value: []byte{1, 2, 3}}},
	}}}
	events, err := StreamEvents(out, 0)
	require.NoError(t, err)
	assert.Contains(t, string(events[1].Payload), `"redactedContent":"AQID"`, "redacted delta")
}

// TestStreamEventsImage streams generated images as the SDK decodes them:
// a start with the format, then the bytes in deltas of 1,024 a rune of
// the chunk, or one delta with the block's error.
func TestStreamEventsImage(t *testing.T) {
	data := bytes.Repeat([]byte{0xff, 0xd8}, 1500)
	failed := &types.ErrorBlock{Message: aws.String("image could not be generated")}
	out := answer()
	out.Output = &types.ConverseOutputMemberMessage{Value: types.Message{Role: "assistant", Content: []types.ContentBlock{
		&types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatJpeg, Source: &types.ImageSourceMemberBytes{Value: data}}},
		&types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatPng, Error: failed}},
	}}}
	events, err := StreamEvents(out, 1)
	require.NoError(t, err)
	var stream bytes.Buffer
	for _, ev := range events {
		require.NoError(t, WriteEventFrame(&stream, ev.Type, ev.Payload))
	}
	decoded, err := readEvents(t, &stream)
	require.NoError(t, err)
	formats, joined, deltas := map[int32]types.ImageFormat{}, map[int32][]byte{}, map[int32]int{}
	var gotErr *types.ErrorBlock
	for _, d := range decoded {
		switch v := d.(type) {
		case *types.ContentBlockStartEvent:
			formats[aws.ToInt32(v.ContentBlockIndex)] = v.Start.(*types.ContentBlockStartMemberImage).Value.Format
		case *types.ContentBlockDeltaEvent:
			i, img := aws.ToInt32(v.ContentBlockIndex), v.Delta.(*types.ContentBlockDeltaMemberImage).Value
			deltas[i]++
			if src, ok := img.Source.(*types.ImageSourceMemberBytes); ok {
				joined[i] = append(joined[i], src.Value...)
			}
			if img.Error != nil {
				gotErr = img.Error
			}
		}
	}
	assert.Equal(t, map[int32]types.ImageFormat{0: types.ImageFormatJpeg, 1: types.ImageFormatPng}, formats)
	assert.Equal(t, map[int32]int{0: 3, 1: 1}, deltas, "deltas a block")
	assert.Equal(t, data, joined[0])
	assert.Equal(t, failed, gotErr)
}

func TestStreamEventsUnsupported(t *testing.T) {
	out := answer()
	out.Output = &types.ConverseOutputMemberMessage{Value: types.Message{Role: "assistant", Content: []types.ContentBlock{
		&types.ContentBlockMemberDocument{Value: types.DocumentBlock{Format: types.DocumentFormatTxt, Name: aws.String("notes")}},
	}}}
	_, err := StreamEvents(out, 0)
	assert.Error(t, err, "StreamEvents streamed a document block")
	_, err = StreamEvents(&bedrockruntime.ConverseOutput{}, 0)
	assert.Error(t, err, "StreamEvents accepted an output without a message")
}

func TestSplit(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want []string
	}{
		{"", 3, []string{""}},
		{"abcdefg", 3, []string{"abc", "def", "g"}},
		{"abc", 0, []string{"abc"}},
		{"héé✓x", 2, []string{"hé", "é✓", "x"}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, split(tt.s, tt.n), "split(%q, %d)", tt.s, tt.n)
	}
}

func TestPad(t *testing.T) {
	got := string(pad([]byte(`{}`), 0))
	assert.True(t, strings.HasPrefix(got, `{"p":"a`) && strings.HasSuffix(got, `"}`), "pad({}) = %s", got)
	got = string(pad([]byte(`{"a":1}`), 1))
	assert.True(t, strings.HasPrefix(got, `{"a":1,"p":"a`) && strings.HasSuffix(got, `"}`), "pad = %s", got)
	assert.Equal(t, pad([]byte(`{"a":1}`), 3), pad([]byte(`{"a":1}`), 3), "pad is not deterministic")
}

func TestExceptionFrame(t *testing.T) {
	tests := []struct {
		typ string
		as  func(error) bool
	}{
		{"modelStreamErrorException", func(err error) bool { var e *types.ModelStreamErrorException; return errors.As(err, &e) }},
		{"throttlingException", func(err error) bool { var e *types.ThrottlingException; return errors.As(err, &e) }},
		{"validationException", func(err error) bool { var e *types.ValidationException; return errors.As(err, &e) }},
		{"internalServerException", func(err error) bool { var e *types.InternalServerException; return errors.As(err, &e) }},
		{"serviceUnavailableException", func(err error) bool { var e *types.ServiceUnavailableException; return errors.As(err, &e) }},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, WriteExceptionFrame(&b, tt.typ, "it broke"))
			f, err := ReadFrame(bytes.NewReader(b.Bytes()))
			require.NoError(t, err)
			assert.Equal(t, Frame{MessageType: "exception", Type: tt.typ, Payload: []byte(`{"message":"it broke"}`)}, f, "frame")
			_, err = readEvents(t, &b)
			require.True(t, tt.as(err), "decoded error %v (%T)", err, err)
			var api smithy.APIError
			require.ErrorAs(t, err, &api)
			assert.Equal(t, "it broke", api.ErrorMessage(), "message of %v", err)
		})
	}
}

func TestReadFrame(t *testing.T) {
	frame, err := EncodeEventFrame("contentBlockStop", []byte(`{"contentBlockIndex":0}`))
	require.NoError(t, err)
	r := bytes.NewReader(frame)
	f, err := ReadFrame(r)
	require.NoError(t, err)
	want := Frame{MessageType: "event", Type: "contentBlockStop", Payload: []byte(`{"contentBlockIndex":0}`)}
	assert.Equal(t, want, f, "ReadFrame")
	_, err = ReadFrame(r)
	assert.Equal(t, io.EOF, err, "at the end")
	_, err = ReadFrame(bytes.NewReader(frame[:len(frame)/2]))
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "half a frame")
	_, err = ReadFrame(bytes.NewReader(frame[:5]))
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "half a prelude")
}
