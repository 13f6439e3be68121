package quota

import (
	"context"
	"io"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithy "github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/internal/wire"
)

// Client returns next with its model calls paced by l. It estimates each
// request's input as the converse package does (a token for every four
// bytes of the messages, system prompt and tools as JSON, an image by its
// size and a PDF by its pages). A call that Bedrock throttles after the
// SDK's retries is made again, through l, up to 10 times in all. So is a
// stream throttled before its first content event; one throttled later
// fails, as its events were already read. With a client other than a
// *bedrockruntime.Client, which takes no SDK options, l sees no retries,
// and a stream's call keeps the tokens it reserved.
func (l *Limiter) Client(next converse.Client) converse.Client {
	return &client{next: next, l: l}
}

// client is a converse.Client whose calls a Limiter paces.
type client struct {
	next converse.Client
	l    *Limiter
}

// attempts bounds the calls made of one request that Bedrock throttles
// after the SDK's own retries.
const attempts = 10

// Converse makes the call of in when l has room for it.
func (c *client) Converse(ctx context.Context, in *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error) {
	tokens := quotaTokens(in.Messages, in.System, in.ToolConfig, in.InferenceConfig)
	for attempt := 1; ; attempt++ {
		r, err := c.l.reserve(ctx, aws.ToString(in.ModelId), tokens)
		if err != nil {
			return nil, err
		}
		out, err := c.next.Converse(ctx, in, c.l.options(optFns)...)
		var u *types.TokenUsage
		if err == nil {
			u = out.Usage
		}
		r.settle(u, err)
		if attempt == attempts || !throttled(err) {
			return out, err
		}
	}
}

// ConverseStream makes the call of in when l has room for it, and returns
// once its stream has begun (see streamWatch).
func (c *client) ConverseStream(ctx context.Context, in *bedrockruntime.ConverseStreamInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseStreamOutput, error) {
	tokens := quotaTokens(in.Messages, in.System, in.ToolConfig, in.InferenceConfig)
	for attempt := 1; ; attempt++ {
		r, err := c.l.reserve(ctx, aws.ToString(in.ModelId), tokens)
		if err != nil {
			return nil, err
		}
		w := newStreamWatch(ctx, r)
		out, err := c.next.ConverseStream(ctx, in, append(c.l.options(optFns), w.install)...)
		if err != nil {
			w.callFailed(err)
			if attempt < attempts && throttled(err) {
				continue
			}
			return nil, err
		}
		if !w.installed {
			w.stop()
			return out, nil
		}
		select {
		case <-w.begun:
		case <-ctx.Done():
			return out, nil // the caller's read ends with ctx
		}
		if attempt == attempts || !throttled(w.err) {
			return out, nil
		}
		out.GetStream().Close() // its error is w.err
	}
}

// quotaTokens is what a call may use of a token quota: its input as
// wire.EstimateTokens estimates it, plus its maxTokens.
func quotaTokens(msgs []types.Message, system []types.SystemContentBlock, tools *types.ToolConfiguration, ic *types.InferenceConfiguration) int {
	n := wire.EstimateTokens(&bedrockruntime.ConverseInput{Messages: msgs, System: system, ToolConfig: tools})
	if ic != nil && ic.MaxTokens != nil {
		n += int(*ic.MaxTokens)
	}
	return n
}

// streamWatch watches the events of one ConverseStream call as the SDK
// decodes them, ahead of the caller, through the protocol that decodes
// them. It settles the call's reservation once: with the usage of its
// metadata event, or with none when the stream fails, ends without one,
// or its context ends first. It tells the Limiter of a
// ThrottlingException among the events. Its begun channel is closed at
// the first event past messageStart, or at the stream's end, with err
// its error (io.EOF at its end).
type streamWatch struct {
	r         *reservation
	installed bool // the client applied install: its events are watched
	stop      func() bool
	settled   sync.Once

	begun chan struct{}
	err   error
	open  bool // begun is not yet closed; the decoding goroutine's alone
}

// newStreamWatch watches a call of ctx that reserved r.
func newStreamWatch(ctx context.Context, r *reservation) *streamWatch {
	w := &streamWatch{r: r, begun: make(chan struct{}), open: true}
	w.stop = context.AfterFunc(ctx, func() { w.settle(nil, ctx.Err()) })
	return w
}

// install is an option of the call that decodes its events through w.
func (w *streamWatch) install(o *bedrockruntime.Options) {
	if o.Protocol != nil {
		o.Protocol = &watchedProtocol{ClientProtocol: o.Protocol, w: w}
		w.installed = true
	}
}

// callFailed settles a call that failed before its stream began: the
// SDK's retryer saw its throttles, if any.
func (w *streamWatch) callFailed(err error) {
	w.settled.Do(func() {
		w.stop()
		w.r.settle(nil, err)
	})
}

// settle settles the reservation with usage u or error err, once; a
// ThrottlingException then empties the Limiter (after the give-back).
func (w *streamWatch) settle(u *types.TokenUsage, err error) {
	w.settled.Do(func() {
		w.stop()
		w.r.settle(u, err)
		w.r.l.throttle(err)
	})
}

// decoded is told of each event decoded, or the error that ends the
// stream.
func (w *streamWatch) decoded(ev smithy.Deserializable, err error) {
	if m, ok := ev.(*types.ConverseStreamMetadataEvent); ok && err == nil {
		w.settle(m.Usage, nil)
	} else if err != nil {
		w.settle(nil, err)
	}
	if _, start := ev.(*types.MessageStartEvent); w.open && (err != nil || !start) {
		w.open, w.err = false, err
		close(w.begun)
	}
}

// watchedProtocol is a protocol whose decoded events a streamWatch sees.
type watchedProtocol struct {
	smithyhttp.ClientProtocol
	w *streamWatch
}

// DeserializeEventMessage is that of the protocol wrapped, seen by the
// streamWatch.
func (p *watchedProtocol) DeserializeEventMessage(schema *smithy.Schema, reg *smithy.TypeRegistry, r io.Reader) (smithy.Deserializable, error) {
	ev, err := p.ClientProtocol.DeserializeEventMessage(schema, reg, r)
	p.w.decoded(ev, err)
	return ev, err
}
