package converse

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/tooluse/bedrock/converse/modelinfo"
)

// The defaults of the zero ToolOptions fields.
const (
	defaultConcurrency = 8
	defaultToolTimeout = time.Minute
	defaultMaxOutput   = 1 << 20
)

// ToolOptions are the settings of tool execution, the same for an
// [Executor], which embeds them, and a [Conversation], whose Options hold
// them as Tools. The zero value is the defaults.
type ToolOptions struct {
	// Concurrency bounds how many calls run at once; 0 means 8, and 1 runs the
	// calls one after another. The bound holds for tool code really running. A
	// call abandoned at its timeout keeps its slot until its tool returns (see
	// Executor.Abandoned). A call that cannot get a slot before its own
	// timeout is answered as timed out, naming the calls that hold the slots.
	Concurrency int
	// Timeout bounds each call, unless the tool sets its own
	// (tools.Options.Timeout); 0 means one minute. A call whose tool returns
	// after its deadline is answered as timed out, whatever it returned.
	Timeout time.Duration
	// MaxOutput bounds the bytes of a call's output (or error text) sent to
	// the model, unless the tool sets its own (tools.Options.MaxOutput); 0
	// means 1 MiB. Longer output is cut, marked as truncated, and sent as
	// text (ToolEnd.Truncated reports it).
	MaxOutput int
	// JSONContent answers with json content blocks instead of text blocks,
	// for models that accept them. A json block must hold an object, so
	// other values are wrapped as {"result": value}. Error results,
	// truncated output and output beside images or documents are always
	// text (Amazon Nova takes a result of a single JSON, or of text and
	// images).
	JSONContent bool
	// Status, if set, says whether results carry the status field. Unset,
	// a Conversation sends it to the model families documented to accept it
	// (Anthropic Claude 3 and later, Amazon Nova), read from the model ID,
	// inference profile or ARN. It leaves it out for the others, some of
	// which reject it. An Executor alone knows no model and sends it. Error
	// results start with "Error: " either way.
	Status *bool
	// Middleware wraps every call, of every kind of tool (typed, Command,
	// MCP, Lambda), the first outermost; see ToolMiddleware.
	Middleware []ToolMiddleware
}

func (o ToolOptions) concurrency() int {
	if o.Concurrency <= 0 {
		return defaultConcurrency
	}
	return o.Concurrency
}

func (o ToolOptions) maxOutput() int {
	if o.MaxOutput <= 0 {
		return defaultMaxOutput
	}
	return o.MaxOutput
}

// sendsStatus reports whether results carry the status field.
func (o ToolOptions) sendsStatus() bool { return o.Status == nil || *o.Status }

func (o ToolOptions) timeout() time.Duration {
	if o.Timeout <= 0 {
		return defaultToolTimeout
	}
	return o.Timeout
}

// Options configure a Conversation. The zero value is usable.
type Options struct {
	// Request is the template of every model call's request: what it sets
	// (System, InferenceConfig, GuardrailConfig, AdditionalModelRequestFields,
	// RequestMetadata, ServiceTier, ... and any field the SDK adds) is sent on
	// each call, summaries included. The loop owns ModelId (New's model),
	// Messages (the history) and ToolConfig (the registry, ToolChoice and
	// SystemTools): a template that sets them fails the Send. A guardrail that
	// blocks a turn ends the Send normally, with StopReason
	// guardrail_intervened and the guardrail's message as the answer. When its
	// Trace is enabled, the assessment is in Result.Trace. The paths of
	// AdditionalModelResponseFieldPaths arrive in
	// Result.AdditionalModelResponseFields. The tier that served a turn is in
	// Result.ServiceTier. Structured sets OutputConfig's text format itself.
	Request bedrockruntime.ConverseInput
	// SystemTools names server-side system tools that Bedrock runs itself,
	// such as Amazon Nova's "nova_grounding" and "nova_code_interpreter";
	// they join the tool configuration after the registry's tools. Their
	// calls and results come back inside the assistant message (toolUse
	// blocks of type server_tool_use and toolResult blocks): the loop never
	// runs or answers them, and echoes them as Bedrock sent them.
	SystemTools []string
	// ToolChoice forces the first turn of each Send to use a tool
	// (&types.ToolChoiceMemberAny{}) or a named tool. Later turns of the same
	// Send leave the choice to the model, so a forced choice cannot loop. A
	// forcing choice that Bedrock would reject (on a model without it, or with
	// Claude's extended thinking enabled) fails the Send before any model call
	// with ErrToolChoice.
	ToolChoice types.ToolChoice
	// PrepareTurn, if set, is called before each turn's model call (not before
	// a summary's). It must be deterministic, as an engine may replay it. It
	// may change, for that call only, the model, the tools offered, the tool
	// choice, the system prompt and the inference settings. It may also end
	// the Send; see TurnPlan. The rules of Bedrock are applied after it, for
	// the model called. Tools the history calls stay described. The history is
	// re-encoded for the model's family (see CallPolicy.Fallback). Cache
	// points are placed on the new prefix. An error of PrepareTurn ends the
	// Send with it.
	PrepareTurn func(ctx context.Context, t *TurnPlan) error
	// ModelCalls, if set, is how each model call is made: deadlines that
	// find a stalled call (ErrStalled), its retries while nothing of its
	// turn has taken effect, hedging, and the fallback models; see
	// CallPolicy. Nil sets no deadline and has no fallback.
	ModelCalls *CallPolicy
	// RepairCall, if set, is asked about each call that would be answered as
	// an unknown tool (ErrUnknownTool) or invalid input
	// (tools.ErrInvalidInput), problem saying which. It is asked before
	// anything of the turn runs or is kept. It may return a corrected call (a
	// near tool name, a fixed input) and true. The corrected call keeps the
	// call's ID, is checked again when it runs, and is what the history shows:
	// the model sees its call as it was repaired. Like PrepareTurn and
	// ApprovalPolicy, it must be deterministic: an engine may replay it.
	RepairCall func(ctx context.Context, call Call, problem error) (Call, bool)
	// MaxTurns bounds the model calls one Send makes; 0 means
	// DefaultMaxTurns.
	MaxTurns int
	// Tools configures the execution of tool calls, as for an Executor. Its
	// Status, unset, is decided by the model family. Calls abandoned at their timeout count against
	// Concurrency until their tools return, across Sends.
	Tools ToolOptions
	// Stream, if set, uses ConverseStream, so text reaches OnEvent as it
	// is generated; see StreamPolicy. For model families that do not
	// support tool use while streaming, turns fall back to Converse with a
	// StreamFallback event. Conversations may stream at once on one
	// client: each ConverseStream call gets an event-stream decoder of its
	// own, as the SDK's client shares one between its streams, which race
	// on it.
	Stream *StreamPolicy
	// Logger receives recovered tool panics, fallbacks and the tool calls
	// of a final answer (a reply whose stop reason is not tool_use), which
	// are not run; nil discards.
	Logger *slog.Logger
	// OnEvent, if set, observes the conversation; see Event.
	OnEvent func(Event)
	// Telemetry configures the conversation's OpenTelemetry spans and
	// metrics; the zero value uses the global providers.
	Telemetry Telemetry
	// ApprovalPolicy, if set, makes a call wait for a decision before it runs
	// when it returns true, in addition to the calls of tools made with
	// tools.Options.RequireApproval: a policy by input, say. With it set,
	// StreamPolicy.EarlyToolStart starts nothing.
	ApprovalPolicy func(Call) bool
	// Approver, if set, decides the calls that need approval, one at a time,
	// before they run. Call.Approve lets it run. Call.Deny answers it with an error
	// result the model sees. Decision{Verdict: Paused} leaves it pending, so
	// that the Send ends with a *PausedError. Without Approver every such call
	// pauses. An error of Approver ends the Send with it, the calls not
	// decided pending. It answers a call's Question too (see Call.Accept): an
	// answer that does not fit is an error.
	Approver func(ctx context.Context, call Call) (Decision, error)
	// Session, if set, is where Send, Resume and Stop save the conversation's
	// State. They save after every step, before its model call or its calls
	// are made: after the prompt is added, after each model call with its
	// calls started, after each tool round. A crash then loses at most the
	// step in progress, and what is saved is always resumable (Store.Load,
	// Restore, Resume). A failed save ends the Send. The step API (see Step)
	// saves nothing: its engine keeps the state.
	Session *Session
	// Cache, if set, places cachePoint blocks on every request of the models
	// with prompt caching (Claude 3.5 Haiku, 3.7 Sonnet, Claude 4 and later;
	// Amazon Nova). They go after the tools, the system prompt and the newest
	// user messages, where the prefix reaches the model's minimum of tokens.
	// There are at most four, with the caller's own. So each turn reads from
	// the cache what the turn before wrote. They are never kept in the
	// history; Usage reports what was read from and written to the cache.
	Cache *CachePolicy
	// Budget, if set, bounds what each Send and the whole conversation
	// spend: tokens, tool calls, wall time and dollars; see Budget.
	Budget *Budget
	// Clock, if set, tells the steps the time: when a Send began and how
	// long it ran (Budget.WallTime), and the times of TurnRecords. An
	// engine that replays a run gives its own (Temporal's workflow.Now), so
	// that the replay decides as the run did; nil means time.Now.
	Clock func() time.Time
	// Prices are the model's prices, for Result.CostUSD, the telemetry and
	// Budget's cost limits; nil means the price table's (see
	// modelinfo.PricesOf). Set them for negotiated rates, provisioned
	// throughput or a model the table lacks.
	Prices *modelinfo.Prices
	// Context, if set, keeps every request inside the model's context
	// window, trimming the history before a model call and once more when
	// Bedrock reports an overflow; see ContextPolicy. Without it a history
	// that outgrows the window ends the Send with Bedrock's error.
	Context *ContextPolicy
}

// Telemetry configures a conversation's spans and metrics, in the
// OpenTelemetry GenAI semantic conventions (see the package doc).
type Telemetry struct {
	// TracerProvider and MeterProvider receive the spans and metrics; nil
	// means the global providers, so a program that set up OpenTelemetry
	// needs no code, and one that did not pays nothing.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// RecordContent adds the prompts, answers, tool arguments and tool
	// results to the spans. It is off by default, as the conventions say:
	// they may hold personal or secret data. AWS credentials and signatures
	// in them are redacted, as in recordings (see recording.Redact), and so
	// is a failed span's status description.
	RecordContent bool
	// ConversationID is the gen_ai.conversation.id of every span of the
	// conversation, which ties its Sends' traces together; empty means
	// Options.Session's ID, or none without a Session.
	ConversationID string
	// AgentName is the gen_ai.agent.name of every span, and names the
	// Send's span "invoke_agent {AgentName}"; empty means none.
	AgentName string
}

// CachePolicy is how Options.Cache caches prompts.
type CachePolicy struct {
	// TTL is the TTL of the points placed: "" for Bedrock's default (5
	// minutes), or types.CacheTTLOneHour, which only the models that
	// accept it get (the others, the default). A point after a caller's
	// shorter one gets the shorter TTL too.
	TTL types.CacheTTL
}

// StreamPolicy is how Options.Stream streams.
type StreamPolicy struct {
	// EarlyToolStart starts each call of a speculative tool
	// (tools.Options.Speculative) as soon as its block is complete, while
	// the model is still streaming. If the turn then does not end in
	// tool_use, the early results are discarded. Use it only for tools
	// without side effects. Once a call started, a stall or a cut of the
	// stream fails the turn: it is not retried (see CallPolicy.Retries).
	EarlyToolStart bool
	// GuardrailMode says how the guardrail of Options.Request checks the
	// stream: empty is Bedrock's default, synchronous.
	GuardrailMode types.GuardrailStreamProcessingMode
}

// guardrailMode is p's GuardrailMode; none without a policy.
func (p *StreamPolicy) guardrailMode() types.GuardrailStreamProcessingMode {
	if p == nil {
		return ""
	}
	return p.GuardrailMode
}

// now is the time by Clock.
func (o *Options) now() time.Time {
	if o.Clock != nil {
		return o.Clock()
	}
	return time.Now()
}

func (o *Options) maxTurns() int {
	if o.MaxTurns <= 0 {
		return DefaultMaxTurns
	}
	return o.MaxTurns
}

func (o *Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}
