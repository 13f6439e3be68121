package converse

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/citation"
	"github.com/tooluse/bedrock/converse/internal/httpbody"
	"github.com/tooluse/bedrock/converse/internal/media"
	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/models"
	"github.com/tooluse/bedrock/tools"
)

// DefaultMaxTurns is the number of model calls one Send may make when
// Options.MaxTurns is zero.
const DefaultMaxTurns = 10

// Client is the part of *bedrockruntime.Client that a Conversation uses.
type Client interface {
	Converse(ctx context.Context, params *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error)
	ConverseStream(ctx context.Context, params *bedrockruntime.ConverseStreamInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseStreamOutput, error)
}

var _ Client = (*bedrockruntime.Client)(nil)

// Result is the outcome of one Send.
type Result struct {
	// Message is the last assistant message and Text its generated text:
	// that of its text blocks and citationsContent blocks, in order.
	Message types.Message
	Text    string
	// Citations are the sources Message cites, in order; none unless
	// citations were enabled (see package citation).
	Citations []citation.Citation
	// StopReason is why the model stopped. end_turn and stop_sequence are a
	// normal end; max_tokens (outside a tool call), guardrail_intervened,
	// content_filtered and unknown reasons are passed through.
	StopReason types.StopReason
	// Model is the model that answered the last turn: New's, or one of
	// Options.PrepareTurn or Options.ModelCalls.Fallback.
	Model string
	// Turns counts the model calls made, and Usage sums their tokens.
	Turns int
	Usage Usage
	// CostUSD is Usage in US dollars, at Options.Prices or the price table
	// (see modelinfo.PricesOf); nil when the model's prices are unknown.
	CostUSD *float64
	// Response is the last model call's trace, metrics and service tier.
	Response
	// History is the whole conversation, this Send included; treat it as
	// read-only, as it shares its messages with the Conversation. After an
	// error it holds what was attempted and may end mid-exchange; the
	// Conversation itself keeps only valid history.
	History []types.Message
}

// Conversation is a chat with a model that can call tools. It keeps the
// history, so each Send continues the conversation. Its methods are safe for
// concurrent use; Sends are serialized, and History never waits for one.
type Conversation struct {
	client   Client
	modelID  string
	tools    *tools.Registry
	opts     Options
	model    models.Model
	exec     *Executor // one for all Sends, so that abandoned calls keep counting
	tel      *telemetry
	caller   *caller       // makes the model calls
	input    *inputCounter // counts a request's tokens for Options.Context
	accounts *accounts     // prices the calls, holds the runs to Options.Budget; what was spent, under its own lock

	sendMu sync.Mutex               // held for a whole Send, and for each step of the step API
	cfg    *types.ToolConfiguration // the tool configuration of the first cfgLen tools; under sendMu
	cfgLen int                      // -1 until cfg is built
	run    *run                     // the Send or Resume in progress; under sendMu
	sticky stickyFallback           // the fallback model turns keep to for a while; under sendMu

	mu        sync.Mutex // held only to read or replace history, never across a model call or a tool
	history   []types.Message
	tail      *openTurn // the calls of the last message, while not all answered
	stopped   bool      // the task was stopped: a Send adds its prompt after the tool results
	unsaved   bool      // a step changed the state since the driver last saved it; under sendMu
	savedTurn int       // the turn of the last step boundary, for StateSaved; under sendMu
	revision  int64     // State.Revision of the last save or of the restored state
	storeData any       // State.StoreData of the last save or of the restored state
	records   records   // with a Session only
	events    events
}

// New starts a conversation with the model modelID (a model ID, inference
// profile or ARN) through client, usually a *bedrockruntime.Client, offering
// the tools of reg (which may be nil).
func New(client Client, modelID string, reg *tools.Registry, optFns ...func(*Options)) *Conversation {
	c := &Conversation{client: client, modelID: modelID, tools: reg, model: models.Parse(modelID), cfgLen: -1}
	for _, fn := range optFns {
		fn(&c.opts)
	}
	c.tel = newTelemetry(modelID, &c.opts)
	c.exec = executorFor(modelID, c.model, reg, &c.opts, c.tel)
	c.events.onEvent = c.opts.OnEvent
	if c.opts.Session != nil {
		c.events.note = func(ev Event) {
			now := c.opts.now()
			c.mu.Lock()
			defer c.mu.Unlock()
			c.records.note(c.history, ev, now)
		}
	}
	if c.opts.OnEvent != nil || c.opts.Session != nil {
		c.exec.OnEvent = c.events.observe
	}
	c.caller = newCaller(client, c.tel, &c.opts, c.exec, c.events.observe)
	c.input = newInputCounter(modelID, &c.opts)
	c.accounts = newAccounts(modelID, &c.opts)
	return c
}

// History returns a copy of the conversation so far, in one of the states of
// the package doc. It is empty, idle (ending with a final answer), interrupted
// (ending with a user message, or with tool calls cut off) or paused (ending
// with tool calls awaiting approval). It keeps every completed step: a Send
// that fails loses only the step in progress. During a Send it returns the
// history at the last step boundary, at once: it may be called from OnEvent or
// from another goroutine. A model call's reply is kept before its TurnEnd, so
// that History then ends with the reply the event reports. That is a final
// answer (without the toolUse blocks nothing answers, and not kept at all when
// left empty). Or it is a tool_use turn whose calls are not answered yet. A
// reply that ends the Send with an error (max_tokens cutting a call, malformed
// tool use or output, a context window exceeded, the turn limit) is never
// kept.
func (c *Conversation) History() []types.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.history)
}

// Send adds a user message holding text and runs the conversation until the
// model stops asking for tools; see SendMessage.
func (c *Conversation) Send(ctx context.Context, text string) (*Result, error) {
	return c.SendMessage(ctx, types.Message{
		Role:    types.ConversationRoleUser,
		Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: text}},
	})
}

// SendMessage adds msg, a user message, and calls the model; while it stops
// with tool_use, runs the requested tools, sends all their results back in
// one user message and calls it again.
//
// Failed tool calls are not errors: the model gets an error result and may
// adjust. The error is for the caller: a Bedrock API error (wrapped with the
// turn, still usable with errors.As, e.g. *types.ThrottlingException),
// cancellation, ErrMaxTurns, ErrMaxTokens, ErrMalformedToolUse,
// ErrMalformedModelOutput, ErrContextWindowExceeded and ErrStreamTruncated. On
// error the Result, when not nil, holds what was attempted. The Conversation
// keeps every completed step: msg, and each tool exchange (the assistant's
// toolUse turn with the user message of all its results). It is then
// interrupted, and Resume goes on without running a completed call again.
// Calls that need approval (see Options.ApprovalPolicy) pause the conversation
// when no Options.Approver decides them: the error is then a *PausedError.
// SendMessage on a paused conversation, or one interrupted after a tool
// exchange, is an error (ErrPaused, ErrInterrupted): Resume it, or Stop it
// first. On a stopped one msg joins the stopped task's results. On a
// conversation interrupted before any tool exchange of its last prompt (the
// model call failed), msg replaces that prompt, which nothing answered.
func (c *Conversation) SendMessage(ctx context.Context, msg types.Message) (*Result, error) {
	ctx, span := c.tel.startSend(ctx)
	defer span.abort()
	res, err := sender{c}.send(ctx, msg, nil)
	span.end(res, err)
	return res, err
}

// send is SendMessage; sh, if not nil, is the shape a structured Send's
// answer must take.
func (c sender) send(ctx context.Context, msg types.Message, sh *shape) (*Result, error) {
	return holding(ctx, c.Conversation, func() (*Result, error) {
		step, err := c.begin(ctx, msg, sh)
		return c.loop(ctx, step, err)
	})
}

// checkContent rejects what Bedrock would. That is a message without content,
// or with a blank text block, or with a document whose name Bedrock does not
// take (DocumentBlock.name). So is one with an image or a document whose bytes
// Bedrock would not take (media.Problem). So is one with a document and no
// text block beside it (the Converse API reference's Message.content).
func checkContent(msg types.Message) error {
	if len(msg.Content) == 0 {
		return errors.New("converse: the message has no content")
	}
	for i, b := range msg.Content {
		switch v := b.(type) {
		case *types.ContentBlockMemberText:
			if strings.TrimSpace(v.Value) == "" {
				return fmt.Errorf("converse: the message's text block %d is blank", i)
			}
		case *types.ContentBlockMemberDocument:
			if name := aws.ToString(v.Value.Name); !models.DocumentNameOK(name) {
				return fmt.Errorf("converse: the message's document %d is named %q: Bedrock takes 1 to %d ASCII letters, digits, single spaces, hyphens, underscores, parentheses and square brackets, without an extension", i, name, models.MaxDocumentName)
			}
			if why := media.Problem(b); why != "" {
				return fmt.Errorf("converse: the message's document %d: %s", i, why)
			}
		case *types.ContentBlockMemberImage:
			if why := media.Problem(b); why != "" {
				return fmt.Errorf("converse: the message's image %d: %s", i, why)
			}
		}
	}
	if message.LoneDocument(msg) {
		return errors.New("converse: the message holds a document and no text block: Bedrock takes a document only with text beside it")
	}
	return nil
}

// stopError maps the stop reasons that end a Send with an error.
func stopError(stop types.StopReason, reply types.Message) error {
	switch stop {
	case types.StopReasonMaxTokens:
		if message.HasToolUse(reply) {
			return fmt.Errorf("%w: the cut-off call was not run; raise the max tokens of the inference configuration", ErrMaxTokens)
		}
	case types.StopReasonMalformedToolUse:
		return ErrMalformedToolUse
	case types.StopReasonMalformedModelOutput:
		return ErrMalformedModelOutput
	case types.StopReasonModelContextWindowExceeded:
		return ErrContextWindowExceeded
	}
	return nil
}

// unforced is cfg without a forced tool choice, so that the model can
// answer once it has its results.
func unforced(cfg *types.ToolConfiguration) *types.ToolConfiguration {
	if cfg == nil || cfg.ToolChoice == nil {
		return cfg
	}
	if _, auto := cfg.ToolChoice.(*types.ToolChoiceMemberAuto); auto {
		return cfg
	}
	return &types.ToolConfiguration{Tools: cfg.Tools}
}

// NewExecutor returns an Executor as a Conversation with the model modelID,
// the tools of reg and the options optFns set runs its calls with (see
// Conversation.Executor). It has Options.Tools, with the status field and
// media rules of the model, Logger, OnEvent and the telemetry. An engine
// driving the steps runs a Step's Calls with it where the tools are, such as a
// Temporal activity.
func NewExecutor(modelID string, reg *tools.Registry, optFns ...func(*Options)) *Executor {
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	e := executorFor(modelID, models.Parse(modelID), reg, &o, newTelemetry(modelID, &o))
	e.OnEvent = o.OnEvent
	return e
}

// executorFor makes the Executor of a conversation with model (modelID
// parsed), reg, o and tel, but for its OnEvent; an unset Status is decided
// by the model family.
func executorFor(modelID string, model models.Model, reg *tools.Registry, o *Options, tel *telemetry) *Executor {
	e := &Executor{Registry: reg, ToolOptions: o.Tools, Logger: o.Logger, tel: tel}
	if e.Status == nil && !model.SupportsToolStatus() {
		e.Status = new(bool)
	}
	e.media = &media.Rules{ModelID: modelID, Kinds: model.ToolResultMedia()}
	return e
}

// events carries a conversation's events. A step returns its events with
// the Step (Step.Events), and its driver reports them; the performers of a
// step's effects (the model call, the tool calls) report theirs as they
// happen. emit is the steps', observe the performers' and the drivers' own.
// Both note ev in the state when it is saved (see TurnRecord).
type events struct {
	onEvent func(Event) // Options.OnEvent
	note    func(Event) // records an event in the state, by Options.Clock; nil without a Session
	mu      sync.Mutex  // held while onEvent runs: one call at a time
	kept    []Event     // the events of the step in progress, for its driver; under sendMu
	collect bool        // emit keeps events: for a Step, or for onEvent; under sendMu
}

// emit keeps ev, an event of the step in progress, for the Step it returns.
func (e *events) emit(ev Event) {
	if e.note != nil {
		e.note(ev)
	}
	if e.collect {
		e.kept = append(e.kept, ev)
	}
}

// observe reports ev to onEvent at once.
func (e *events) observe(ev Event) {
	if e.note != nil {
		e.note(ev)
	}
	e.report(ev)
}

// report hands evs to onEvent, one call at a time.
func (e *events) report(evs ...Event) {
	if e.onEvent == nil || len(evs) == 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range evs {
		e.onEvent(ev)
	}
}

// flush reports the events the steps kept since the last flush: Send's
// driver does, after each step.
func (e *events) flush() {
	e.report(e.kept...)
	clear(e.kept)
	e.kept = e.kept[:0]
}

// take hands the kept events to the Step a step returns.
func (e *events) take() []Event {
	evs := e.kept
	e.kept = nil
	return evs
}

// ClientOptions sets up a bedrockruntime client for conversations, as an
// option of bedrockruntime.NewFromConfig:
//
//	client := bedrockruntime.NewFromConfig(cfg, converse.ClientOptions)
//
// Its HTTP client (the SDK's default when o.HTTPClient is nil) sends request
// bodies without io.WriterTo. The SDK closes a request body once the response
// starts. A transport still copying it through WriterTo then drops the
// connection. Streams die with "use of closed network connection" (a few in a
// hundred streamed conversations on a fast connection). recording.PlainBodies
// does the same for other AWS clients.
func ClientOptions(o *bedrockruntime.Options) {
	o.HTTPClient = httpbody.Client(o.HTTPClient)
}
