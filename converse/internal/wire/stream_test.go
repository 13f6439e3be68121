package wire

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/schemas"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithy "github.com/aws/smithy-go"
	"github.com/aws/smithy-go/transport/http/protocol/restjson1"
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
	if err != nil {
		t.Fatal(err)
	}
	var typesSeen []string
	var stream bytes.Buffer
	for _, ev := range events {
		typesSeen = append(typesSeen, ev.Type)
		if !bytes.Contains(ev.Payload, []byte(`"p":"`)) {
			t.Errorf("%s payload %s has no padding", ev.Type, ev.Payload)
		}
		if err := WriteEventFrame(&stream, ev.Type, ev.Payload); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"messageStart",
		"contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockStop",
		"contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockStop",
		"contentBlockStart", "contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockStop",
		"messageStop", "metadata",
	}
	if !reflect.DeepEqual(typesSeen, want) {
		t.Errorf("event types =\n%v\nwant\n%v", typesSeen, want)
	}

	decoded, err := readEvents(t, &stream)
	if err != nil {
		t.Fatal(err)
	}
	if len(decoded) != len(events) {
		t.Fatalf("decoded %d events, want %d", len(decoded), len(events))
	}
	texts := map[int32]string{}
	var signature string
	var start *types.ToolUseBlockStart
	var stop types.StopReason
	var usage *types.TokenUsage
	for _, d := range decoded {
		switch v := d.(type) {
		case *types.MessageStartEvent:
			if v.Role != types.ConversationRoleAssistant {
				t.Errorf("role = %q", v.Role)
			}
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
			if aws.ToInt64(v.Metrics.LatencyMs) != 7 {
				t.Errorf("latency = %v", v.Metrics.LatencyMs)
			}
		default:
			t.Errorf("unexpected event %T", d)
		}
	}
	wantTexts := map[int32]string{0: "hmm, weather", 1: "Checking now", 2: `{"city":"Paris"}`}
	if !reflect.DeepEqual(texts, wantTexts) {
		t.Errorf("assembled %q, want %q", texts, wantTexts)
	}
	if signature != "sig" {
		t.Errorf("signature = %q", signature)
	}
	if start == nil || aws.ToString(start.ToolUseId) != "t1" || aws.ToString(start.Name) != "get_weather" {
		t.Errorf("tool start = %+v", start)
	}
	if stop != types.StopReasonToolUse || aws.ToInt32(usage.TotalTokens) != 15 {
		t.Errorf("stop %q usage %+v", stop, usage)
	}
}

func TestStreamEventsRedacted(t *testing.T) {
	out := answer()
	out.Output = &types.ConverseOutputMemberMessage{Value: types.Message{Role: "assistant", Content: []types.ContentBlock{
		&types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{Value: []byte{1, 2, 3}}},
	}}}
	events, err := StreamEvents(out, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(events[1].Payload); !strings.Contains(got, `"redactedContent":"AQID"`) {
		t.Errorf("redacted delta = %s", got)
	}
}

func TestStreamEventsUnsupported(t *testing.T) {
	out := answer()
	out.Output = &types.ConverseOutputMemberMessage{Value: types.Message{Role: "assistant", Content: []types.ContentBlock{
		&types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatPng}},
	}}}
	if _, err := StreamEvents(out, 0); err == nil {
		t.Error("StreamEvents streamed an image block")
	}
	if _, err := StreamEvents(&bedrockruntime.ConverseOutput{}, 0); err == nil {
		t.Error("StreamEvents accepted an output without a message")
	}
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
		if got := split(tt.s, tt.n); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("split(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestPad(t *testing.T) {
	if got := string(pad([]byte(`{}`), 0)); !strings.HasPrefix(got, `{"p":"a`) || !strings.HasSuffix(got, `"}`) {
		t.Errorf("pad({}) = %s", got)
	}
	if got := string(pad([]byte(`{"a":1}`), 1)); !strings.HasPrefix(got, `{"a":1,"p":"a`) || !strings.HasSuffix(got, `"}`) {
		t.Errorf("pad = %s", got)
	}
	if a, b := pad([]byte(`{"a":1}`), 3), pad([]byte(`{"a":1}`), 3); !bytes.Equal(a, b) {
		t.Errorf("pad is not deterministic: %s, %s", a, b)
	}
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
			if err := WriteExceptionFrame(&b, tt.typ, "it broke"); err != nil {
				t.Fatal(err)
			}
			f, err := ReadFrame(bytes.NewReader(b.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if f.MessageType != "exception" || f.Type != tt.typ || string(f.Payload) != `{"message":"it broke"}` {
				t.Errorf("frame = %+v", f)
			}
			_, err = readEvents(t, &b)
			if !tt.as(err) {
				t.Fatalf("decoded error %v (%T)", err, err)
			}
			var api smithy.APIError
			if !errors.As(err, &api) || api.ErrorMessage() != "it broke" {
				t.Errorf("message of %v", err)
			}
		})
	}
}

func TestReadFrame(t *testing.T) {
	frame, err := EncodeEventFrame("contentBlockStop", []byte(`{"contentBlockIndex":0}`))
	if err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(frame)
	f, err := ReadFrame(r)
	if err != nil {
		t.Fatal(err)
	}
	want := Frame{MessageType: "event", Type: "contentBlockStop", Payload: []byte(`{"contentBlockIndex":0}`)}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("ReadFrame = %+v, want %+v", f, want)
	}
	if _, err := ReadFrame(r); err != io.EOF {
		t.Errorf("at the end: %v, want io.EOF", err)
	}
	if _, err := ReadFrame(bytes.NewReader(frame[:len(frame)/2])); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("half a frame: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := ReadFrame(bytes.NewReader(frame[:5])); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("half a prelude: %v, want io.ErrUnexpectedEOF", err)
	}
}
