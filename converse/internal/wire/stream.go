package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/schemas"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithy "github.com/aws/smithy-go"
	"github.com/aws/smithy-go/eventstream"
	"github.com/aws/smithy-go/transport/http/protocol/restjson1"
)

// Content types of the two Bedrock wire forms.
const (
	ContentTypeJSON        = "application/json"
	ContentTypeEventStream = "application/vnd.amazon.eventstream"
)

// Event is one ConverseStream event: its :event-type header (such as
// "contentBlockDelta") and its JSON payload.
type Event struct {
	Type    string
	Payload []byte
}

// StreamEvents splits a complete answer into the ConverseStream events a
// real model sends for it:
//
//	messageStart{role}
//	per content block i:
//	  text:             contentBlockDelta{text}...            contentBlockStop
//	  toolUse:          contentBlockStart{toolUse{id, name}}
//	                    contentBlockDelta{toolUse{input}}...  contentBlockStop
//	  reasoningContent: contentBlockDelta{reasoningContent{text}}...
//	                    contentBlockDelta{reasoningContent{signature}} contentBlockStop
//	  citationsContent: contentBlockDelta{text}... contentBlockDelta{citation}... contentBlockStop
//	  toolResult:       contentBlockStart{toolResult{toolUseId, type, status}}
//	  (a server tool's) contentBlockDelta{toolResult[{text}|{json}]}...  contentBlockStop
//	messageStop{stopReason}
//	metadata{usage, metrics}
//
// Text, reasoning text and the compact tool input JSON are cut into deltas
// of at most chunk runes (chunk <= 0 sends each in one delta). Like Bedrock,
// every payload carries a padding member "p" that clients ignore.
func StreamEvents(out *bedrockruntime.ConverseOutput, chunk int) ([]Event, error) {
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return nil, fmt.Errorf("wire: stream events: output %T is not a message", out.Output)
	}
	var s streamer
	role := msg.Value.Role
	if role == "" {
		role = types.ConversationRoleAssistant
	}
	s.add(schemas.ConverseStreamOutput_messageStart, &types.ConverseStreamOutputMemberMessageStart{
		Value: types.MessageStartEvent{Role: role},
	})
	for i, block := range msg.Value.Content {
		if err := s.block(int32(i), block, chunk); err != nil {
			return nil, err
		}
	}
	s.add(schemas.ConverseStreamOutput_messageStop, &types.ConverseStreamOutputMemberMessageStop{
		Value: types.MessageStopEvent{
			StopReason:                    out.StopReason,
			AdditionalModelResponseFields: out.AdditionalModelResponseFields,
		},
	})
	meta := types.ConverseStreamMetadataEvent{
		Usage:             out.Usage,
		PerformanceConfig: out.PerformanceConfig,
		ServiceTier:       out.ServiceTier,
	}
	if out.Metrics != nil {
		meta.Metrics = &types.ConverseStreamMetrics{LatencyMs: out.Metrics.LatencyMs}
	}
	if out.Trace != nil {
		meta.Trace = &types.ConverseStreamTrace{Guardrail: out.Trace.Guardrail, PromptRouter: out.Trace.PromptRouter}
	}
	s.add(schemas.ConverseStreamOutput_metadata, &types.ConverseStreamOutputMemberMetadata{Value: meta})
	if s.err != nil {
		return nil, fmt.Errorf("wire: stream events: %w", s.err)
	}
	return s.events, nil
}

type streamer struct {
	events []Event
	err    error
}

func (s *streamer) add(variant *smithy.Schema, v smithy.Serializable) {
	if s.err != nil {
		return
	}
	payload, err := eventPayload(variant, v)
	if err != nil {
		s.err = err
		return
	}
	s.events = append(s.events, Event{
		Type:    variant.MemberName(),
		Payload: pad(payload, len(s.events)),
	})
}

func (s *streamer) delta(i int32, d types.ContentBlockDelta) {
	s.add(schemas.ConverseStreamOutput_contentBlockDelta, &types.ConverseStreamOutputMemberContentBlockDelta{
		Value: types.ContentBlockDeltaEvent{ContentBlockIndex: aws.Int32(i), Delta: d},
	})
}

func (s *streamer) block(i int32, block types.ContentBlock, chunk int) error {
	switch b := block.(type) {
	case *types.ContentBlockMemberText:
		for _, piece := range split(b.Value, chunk) {
			s.delta(i, &types.ContentBlockDeltaMemberText{Value: piece})
		}
	case *types.ContentBlockMemberToolUse:
		input := []byte("{}")
		if b.Value.Input != nil {
			raw, err := b.Value.Input.MarshalSmithyDocument()
			if err != nil {
				return fmt.Errorf("wire: stream events: tool input of block %d: %w", i, err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, raw); err != nil {
				return fmt.Errorf("wire: stream events: tool input of block %d: %w", i, err)
			}
			input = compact.Bytes()
		}
		s.add(schemas.ConverseStreamOutput_contentBlockStart, &types.ConverseStreamOutputMemberContentBlockStart{
			Value: types.ContentBlockStartEvent{
				ContentBlockIndex: aws.Int32(i),
				Start: &types.ContentBlockStartMemberToolUse{Value: types.ToolUseBlockStart{
					ToolUseId: b.Value.ToolUseId,
					Name:      b.Value.Name,
					Type:      b.Value.Type,
				}},
			},
		})
		for _, piece := range split(string(input), chunk) {
			s.delta(i, &types.ContentBlockDeltaMemberToolUse{Value: types.ToolUseBlockDelta{Input: aws.String(piece)}})
		}
	case *types.ContentBlockMemberReasoningContent:
		switch r := b.Value.(type) {
		case *types.ReasoningContentBlockMemberReasoningText:
			for _, piece := range split(aws.ToString(r.Value.Text), chunk) {
				s.delta(i, &types.ContentBlockDeltaMemberReasoningContent{
					Value: &types.ReasoningContentBlockDeltaMemberText{Value: piece},
				})
			}
			if r.Value.Signature != nil {
				s.delta(i, &types.ContentBlockDeltaMemberReasoningContent{
					Value: &types.ReasoningContentBlockDeltaMemberSignature{Value: *r.Value.Signature},
				})
			}
		case *types.ReasoningContentBlockMemberRedactedContent:
			s.delta(i, &types.ContentBlockDeltaMemberReasoningContent{
				Value: &types.ReasoningContentBlockDeltaMemberRedactedContent{Value: r.Value},
			})
		default:
			return fmt.Errorf("wire: stream events: block %d: cannot stream reasoning content %T", i, b.Value)
		}
	case *types.ContentBlockMemberCitationsContent:
		s.citations(i, b.Value, chunk)
	case *types.ContentBlockMemberToolResult:
		s.toolResult(i, b.Value, chunk)
	case *types.ContentBlockMemberImage:
		s.image(i, b.Value, chunk)
	default:
		return fmt.Errorf("wire: stream events: block %d: cannot stream content block %T", i, block)
	}
	s.add(schemas.ConverseStreamOutput_contentBlockStop, &types.ConverseStreamOutputMemberContentBlockStop{
		Value: types.ContentBlockStopEvent{ContentBlockIndex: aws.Int32(i)},
	})
	return nil
}

// citations streams a citationsContent block: its generated text, then one
// citation delta per citation.
func (s *streamer) citations(i int32, b types.CitationsContentBlock, chunk int) {
	var text strings.Builder
	for _, c := range b.Content {
		if t, ok := c.(*types.CitationGeneratedContentMemberText); ok {
			text.WriteString(t.Value)
		}
	}
	for _, piece := range split(text.String(), chunk) {
		s.delta(i, &types.ContentBlockDeltaMemberText{Value: piece})
	}
	for _, c := range b.Citations {
		d := types.CitationsDelta{Location: c.Location, Source: c.Source, Title: c.Title}
		for _, sc := range c.SourceContent {
			if t, ok := sc.(*types.CitationSourceContentMemberText); ok {
				d.SourceContent = append(d.SourceContent, types.CitationSourceContentDelta{Text: aws.String(t.Value)})
			}
		}
		s.delta(i, &types.ContentBlockDeltaMemberCitation{Value: d})
	}
}

// toolResult streams a server tool's result block: a start with its id,
// type and status, then its text in pieces and each json block whole.
func (s *streamer) toolResult(i int32, b types.ToolResultBlock, chunk int) {
	s.add(schemas.ConverseStreamOutput_contentBlockStart, &types.ConverseStreamOutputMemberContentBlockStart{
		Value: types.ContentBlockStartEvent{
			ContentBlockIndex: aws.Int32(i),
			Start: &types.ContentBlockStartMemberToolResult{Value: types.ToolResultBlockStart{
				ToolUseId: b.ToolUseId, Type: b.Type, Status: b.Status,
			}},
		},
	})
	for _, c := range b.Content {
		switch v := c.(type) {
		case *types.ToolResultContentBlockMemberText:
			for _, piece := range split(v.Value, chunk) {
				s.delta(i, &types.ContentBlockDeltaMemberToolResult{Value: []types.ToolResultBlockDelta{&types.ToolResultBlockDeltaMemberText{Value: piece}}})
			}
		case *types.ToolResultContentBlockMemberJson:
			s.delta(i, &types.ContentBlockDeltaMemberToolResult{Value: []types.ToolResultBlockDelta{&types.ToolResultBlockDeltaMemberJson{Value: v.Value}}})
		default:
			s.err = fmt.Errorf("block %d: cannot stream tool result content %T", i, c)
		}
	}
}

// imageChunk is how many of an image's bytes a delta carries for each
// rune of a text delta.
const imageChunk = 1024

// image streams a generated image: a start with its format, then its bytes
// in pieces (another source, or an error, in one delta).
func (s *streamer) image(i int32, b types.ImageBlock, chunk int) {
	s.add(schemas.ConverseStreamOutput_contentBlockStart, &types.ConverseStreamOutputMemberContentBlockStart{
		Value: types.ContentBlockStartEvent{
			ContentBlockIndex: aws.Int32(i),
			Start:             &types.ContentBlockStartMemberImage{Value: types.ImageBlockStart{Format: b.Format}},
		},
	})
	src, ok := b.Source.(*types.ImageSourceMemberBytes)
	if !ok || b.Error != nil {
		s.delta(i, &types.ContentBlockDeltaMemberImage{Value: types.ImageBlockDelta{Source: b.Source, Error: b.Error}})
		return
	}
	data, n := src.Value, max(chunk, 1)*imageChunk
	for {
		piece := data[:min(n, len(data))]
		s.delta(i, &types.ContentBlockDeltaMemberImage{Value: types.ImageBlockDelta{Source: &types.ImageSourceMemberBytes{Value: piece}}})
		if data = data[len(piece):]; len(data) == 0 {
			return
		}
	}
}

// split cuts s into pieces of at most n runes; an empty s is one empty piece
// so that every block has at least one delta.
func split(s string, n int) []string {
	if n <= 0 || s == "" {
		return []string{s}
	}
	var pieces []string
	for s != "" {
		end, runes := 0, 0
		for end < len(s) && runes < n {
			_, size := utf8.DecodeRuneInString(s[end:])
			end += size
			runes++
		}
		pieces = append(pieces, s[:end])
		s = s[end:]
	}
	return pieces
}

// eventPayload serializes one event with the SDK's event stream codec and
// returns the JSON payload of the frame it wrote.
func eventPayload(variant *smithy.Schema, v smithy.Serializable) ([]byte, error) {
	var frame bytes.Buffer
	if err := restjson1.New(nil).SerializeEventMessage(schemas.ConverseStreamOutput, variant, v, &frame); err != nil {
		return nil, err
	}
	msg, err := eventstream.NewDecoder().Decode(&frame, nil)
	if err != nil {
		return nil, err
	}
	if len(msg.Payload) == 0 {
		return []byte("{}"), nil
	}
	return msg.Payload, nil
}

const padLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// pad adds the member "p" that Bedrock appends to every event payload to
// mask the payload length. Its length varies with the event but is
// deterministic, so that goldens stay stable.
func pad(payload []byte, seq int) []byte {
	n := 1 + (len(payload)*7+seq*13)%len(padLetters)
	p := `"p":"` + padLetters[:n] + `"}`
	out := make([]byte, 0, len(payload)+len(p)+1)
	out = append(out, bytes.TrimSuffix(bytes.TrimSpace(payload), []byte("}"))...)
	if len(out) > 1 {
		out = append(out, ',')
	}
	return append(out, p...)
}

// WriteEventFrame writes one event as an AWS event stream frame with the
// headers Bedrock sends: :event-type, :content-type and :message-type event.
func WriteEventFrame(w io.Writer, eventType string, payload []byte) error {
	return writeFrame(w, eventstream.EventTypeHeader, eventType, eventstream.EventMessageType, payload)
}

// WriteExceptionFrame writes an exception frame, such as
// ("modelStreamErrorException", "..."). The SDK turns it into the matching
// typed error returned by the stream's Err method.
func WriteExceptionFrame(w io.Writer, exceptionType, message string) error {
	payload, err := json.Marshal(struct {
		Message string `json:"message"`
	}{message})
	if err != nil {
		return err
	}
	return writeFrame(w, eventstream.ExceptionTypeHeader, exceptionType, eventstream.ExceptionMessageType, payload)
}

// writeFrame encodes a frame with smithy's encoder, which writes the
// prelude and both CRCs. The header order is Bedrock's.
func writeFrame(w io.Writer, typeHeader, typ, messageType string, payload []byte) error {
	var msg eventstream.Message
	msg.Headers.Set(typeHeader, eventstream.StringValue(typ))
	msg.Headers.Set(eventstream.ContentTypeHeader, eventstream.StringValue(ContentTypeJSON))
	msg.Headers.Set(eventstream.MessageTypeHeader, eventstream.StringValue(messageType))
	msg.Payload = payload
	return eventstream.NewEncoder().Encode(w, msg)
}

// EncodeEventFrame returns the frame WriteEventFrame writes.
func EncodeEventFrame(eventType string, payload []byte) ([]byte, error) {
	var b bytes.Buffer
	err := WriteEventFrame(&b, eventType, payload)
	return b.Bytes(), err
}
