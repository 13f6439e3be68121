package converse

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/schemas"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go/transport/http/protocol/restjson1"

	"github.com/tooluse/bedrock/converse/internal/wire"
	"github.com/tooluse/bedrock/tools"
)

// ownProtocol gives a ConverseStream call a protocol, and so an event-stream
// codec, of its own. A client's protocol is made once, in bedrockruntime.New.
// Its one codec (a decoder and the buffer events are decoded into) is shared
// by the reader goroutines of all the client's streams, which race on it
// (smithy-go v1.28.9). A service that shares one client between conversations,
// as it should, would see streams' events mixed. A protocol the caller set on
// the client, of another type, is left alone.
func ownProtocol(o *bedrockruntime.Options) {
	if _, ok := o.Protocol.(*restjson1.Protocol); ok {
		o.Protocol = restjson1.New(schemas.AmazonBedrockFrontendService)
	}
}

// earlyStarter starts speculative tool calls while the model still streams.
type earlyStarter struct {
	ctx     context.Context
	cancel  context.CancelFunc
	turn    int
	exec    *Executor
	started map[string]*earlyCall // by toolUseId; the executor checks it is the same call
	seen    map[string]bool       // toolUseIds of the blocks completed so far
}

func newEarlyStarter(ctx context.Context, turn int, exec *Executor) *earlyStarter {
	ctx, cancel := context.WithCancel(ctx)
	return &earlyStarter{ctx: ctx, cancel: cancel, turn: turn, exec: exec,
		started: map[string]*earlyCall{}, seen: map[string]bool{}}
}

// maybeStart starts c if its tool is speculative and no block before it had
// its toolUseId: a repeat is answered as a duplicate, never run.
func (s *earlyStarter) maybeStart(c toolCall) {
	repeat := s.seen[c.id]
	s.seen[c.id] = true
	if c.inputErr != nil || repeat {
		return
	}
	if tool, ok := s.exec.lookup(c.name); ok && tool.Speculative() {
		s.started[c.id] = s.exec.start(s.ctx, s.turn, c)
	}
}

// assembler builds a message from ConverseStream events, indexed by
// contentBlockIndex.
type assembler struct {
	blocks map[int32]*blockBuilder
}

type blockBuilder struct {
	text       strings.Builder
	toolUse    *types.ToolUseBlockStart
	toolResult *types.ToolResultBlockStart // a server tool's result
	result     []types.ToolResultContentBlock
	image      *types.ImageBlock // an image the model generates, its bytes joined
	input      strings.Builder
	decoded    *toolCall // the call, once decoded
	reasoning  bool
	thought    strings.Builder
	signature  string
	redacted   []byte
	citations  []types.Citation
}

func (a *assembler) block(index *int32) *blockBuilder {
	if a.blocks == nil {
		a.blocks = map[int32]*blockBuilder{}
	}
	i := aws.ToInt32(index)
	b := a.blocks[i]
	if b == nil {
		b = &blockBuilder{}
		a.blocks[i] = b
	}
	return b
}

func (a *assembler) start(index *int32, start types.ContentBlockStart) {
	b := a.block(index)
	switch s := start.(type) {
	case *types.ContentBlockStartMemberToolUse:
		v := s.Value
		b.toolUse = &v
	case *types.ContentBlockStartMemberToolResult:
		v := s.Value
		b.toolResult = &v
	case *types.ContentBlockStartMemberImage:
		b.image = &types.ImageBlock{Format: s.Value.Format}
	}
}

// delta adds a delta to its block and returns the text it carries, if any.
func (a *assembler) delta(index *int32, d types.ContentBlockDelta) string {
	b := a.block(index)
	switch d := d.(type) {
	case *types.ContentBlockDeltaMemberText:
		b.text.WriteString(d.Value)
		return d.Value
	case *types.ContentBlockDeltaMemberToolUse:
		b.input.WriteString(aws.ToString(d.Value.Input))
	case *types.ContentBlockDeltaMemberReasoningContent:
		b.reasoning = true
		switch r := d.Value.(type) {
		case *types.ReasoningContentBlockDeltaMemberText:
			b.thought.WriteString(r.Value)
		case *types.ReasoningContentBlockDeltaMemberSignature:
			b.signature += r.Value
		case *types.ReasoningContentBlockDeltaMemberRedactedContent:
			b.redacted = append(b.redacted, r.Value...)
		}
	case *types.ContentBlockDeltaMemberCitation:
		cit := types.Citation{Location: d.Value.Location, Source: d.Value.Source, Title: d.Value.Title}
		for _, sc := range d.Value.SourceContent {
			cit.SourceContent = append(cit.SourceContent, &types.CitationSourceContentMemberText{Value: aws.ToString(sc.Text)})
		}
		b.citations = append(b.citations, cit)
	case *types.ContentBlockDeltaMemberToolResult:
		for _, r := range d.Value {
			b.addResult(r)
		}
	case *types.ContentBlockDeltaMemberImage:
		b.addImage(d.Value)
	}
	return ""
}

// addImage adds a delta of a generated image: its bytes are joined, any
// other source replaces them, and an error is kept on the block.
func (b *blockBuilder) addImage(d types.ImageBlockDelta) {
	if b.image == nil {
		b.image = &types.ImageBlock{}
	}
	if d.Error != nil {
		b.image.Error = d.Error
	}
	switch src := d.Source.(type) {
	case nil:
	case *types.ImageSourceMemberBytes:
		var have []byte // a copy of the joined bytes, never the event's own
		if h, ok := b.image.Source.(*types.ImageSourceMemberBytes); ok {
			have = h.Value
		}
		b.image.Source = &types.ImageSourceMemberBytes{Value: append(have, src.Value...)}
	default:
		b.image.Source = src
	}
}

// addResult adds a delta of a server tool's result: text deltas make one
// text block, each json delta a json block.
func (b *blockBuilder) addResult(d types.ToolResultBlockDelta) {
	switch r := d.(type) {
	case *types.ToolResultBlockDeltaMemberText:
		if n := len(b.result); n > 0 {
			if last, ok := b.result[n-1].(*types.ToolResultContentBlockMemberText); ok {
				b.result[n-1] = &types.ToolResultContentBlockMemberText{Value: last.Value + r.Value}
				return
			}
		}
		b.result = append(b.result, &types.ToolResultContentBlockMemberText{Value: r.Value})
	case *types.ToolResultBlockDeltaMemberJson:
		b.result = append(b.result, &types.ToolResultContentBlockMemberJson{Value: r.Value})
	}
}

// stop completes a block; for a client's toolUse block it returns the call.
func (a *assembler) stop(index *int32) (toolCall, bool) {
	b := a.block(index)
	if !b.clientCall() {
		return toolCall{}, false
	}
	return b.call(), true
}

// clientCall reports whether the block is a toolUse the client must answer,
// not a server tool's call.
func (b *blockBuilder) clientCall() bool {
	return b.toolUse != nil && b.toolUse.Type != types.ToolUseTypeServerToolUse
}

// call decodes a toolUse block's streamed input. Empty input, as sent for
// tools without arguments, is {}; input that is not JSON is an error for
// the call, never silently {}.
func (b *blockBuilder) call() toolCall {
	if b.decoded != nil {
		return *b.decoded
	}
	c := toolCall{id: aws.ToString(b.toolUse.ToolUseId), name: aws.ToString(b.toolUse.Name)}
	raw := strings.TrimSpace(b.input.String())
	var compact bytes.Buffer
	switch {
	case raw == "":
		c.input = json.RawMessage("{}")
	case json.Compact(&compact, []byte(raw)) != nil:
		c.input = json.RawMessage("{}")
		c.inputErr = fmt.Errorf("%w: the streamed input is not valid JSON: %.200q", tools.ErrInvalidInput, raw)
	default:
		c.input = compact.Bytes()
	}
	b.decoded = &c
	return c
}

// message returns the assembled message and the client's tool calls.
func (a *assembler) message() (types.Message, []toolCall) {
	msg := types.Message{Role: types.ConversationRoleAssistant}
	var calls []toolCall
	indexes := make([]int32, 0, len(a.blocks))
	for i := range a.blocks {
		indexes = append(indexes, i)
	}
	slices.Sort(indexes)
	for _, i := range indexes {
		b := a.blocks[i]
		switch {
		case b.toolUse != nil:
			c := b.call()
			if b.clientCall() {
				calls = append(calls, c)
			}
			msg.Content = append(msg.Content, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
				ToolUseId: b.toolUse.ToolUseId,
				Name:      b.toolUse.Name,
				Type:      b.toolUse.Type,
				Input:     inputDocument(c.input),
			}})
		case b.toolResult != nil:
			msg.Content = append(msg.Content, &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
				ToolUseId: b.toolResult.ToolUseId,
				Status:    b.toolResult.Status,
				Type:      b.toolResult.Type,
				Content:   b.result,
			}})
		case b.image != nil:
			msg.Content = append(msg.Content, &types.ContentBlockMemberImage{Value: *b.image})
		case b.reasoning && b.redacted != nil:
			msg.Content = append(msg.Content, &types.ContentBlockMemberReasoningContent{
				Value: &types.ReasoningContentBlockMemberRedactedContent{Value: b.redacted}})
		case b.reasoning:
			rt := types.ReasoningTextBlock{Text: aws.String(b.thought.String())}
			if b.signature != "" {
				rt.Signature = aws.String(b.signature)
			}
			msg.Content = append(msg.Content, &types.ContentBlockMemberReasoningContent{
				Value: &types.ReasoningContentBlockMemberReasoningText{Value: rt}})
		case b.citations != nil:
			msg.Content = append(msg.Content, &types.ContentBlockMemberCitationsContent{Value: types.CitationsContentBlock{
				Content:   []types.CitationGeneratedContent{&types.CitationGeneratedContentMemberText{Value: b.text.String()}},
				Citations: b.citations,
			}})
		default:
			msg.Content = append(msg.Content, &types.ContentBlockMemberText{Value: b.text.String()})
		}
	}
	return msg, calls
}

// inputDocument makes the document of a tool input for the history,
// keeping numbers exactly as the model wrote them. Input already in the SDK's
// encoding, as a model's usually is, is kept as it is, not decoded.
func inputDocument(raw json.RawMessage) document.Interface {
	if len(raw) > 0 && raw[0] == '{' {
		if d, ok := wire.EncodedJSON(raw); ok {
			return d
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil || v == nil {
		v = map[string]any{}
	}
	return document.NewLazyDocument(wire.ExactNumbers(v))
}
