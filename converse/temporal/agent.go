package temporal

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/agenttool"
	"github.com/tooluse/bedrock/tools"
)

// The names the workflow, its signal, its query and its activities are
// registered and called by.
const (
	WorkflowName      = "converse.Conversation"
	DecideSignalName  = "converse.decide"
	StatusQueryName   = "converse.status"
	ModelActivityName = "converse.model"
	ToolActivityName  = "converse.tool"
	CountActivityName = "converse.count"
)

// DefaultTurnsPerRun is the number of model calls after which a workflow
// run continues as new when Options.TurnsPerRun is zero.
const DefaultTurnsPerRun = 100

// Options configure an Agent. Every worker of a task queue must have the
// same: the workflow's code reads them, and a replay on another worker must
// make the same decisions.
type Options struct {
	// Conversation configures the conversations, as for converse.New: in
	// the workflow (tool configuration, request template, ApprovalPolicy,
	// Context, Cache, MaxTurns, Tools.Concurrency) and in the
	// activities (Tools, telemetry, OnEvent, Logger). The workflow's steps
	// do no I/O, so it switches nothing off. It sets no Approver, as
	// decisions come by signal. ApprovalPolicy, PrepareTurn and RepairCall run in
	// the workflow and must be deterministic: functions of their input
	// alone. The workflow sets Clock to workflow.Now, so a Budget's
	// WallTime replays as it ran.
	Conversation func(*converse.Options)
	// ModelActivity are the activity options of a model call. A zero
	// timeout means 5 minutes from start to close; a nil RetryPolicy, 10
	// attempts backing off from 1 s to 1 minute. A Bedrock error that
	// converse.Classify does not call OutcomeRetry (a ValidationException,
	// AccessDenied) is never retried, whatever the policy. The policy's
	// retries stand for the SDK's in a Send: a call still failing with
	// throttling after the last attempt goes to the next of
	// converse.Options.ModelCalls.Fallback, if any, with the policy's attempts
	// again.
	ModelActivity workflow.ActivityOptions
	// ToolActivity are the activity options of a tool call. Zero fields
	// take the defaults, each on its own. No StartToCloseTimeout nor
	// ScheduleToCloseTimeout means 10 minutes from start to close. A zero
	// HeartbeatTimeout means 1 minute. The activity heartbeats while the
	// tool runs, every third of it, so a worker that dies is noticed then.
	// A nil RetryPolicy takes the default, as for ModelActivity. A tool that
	// fails is answered with an error result, not retried: the retries are
	// for workers that died.
	//
	// A StartToCloseTimeout set here (or, without one, a
	// ScheduleToCloseTimeout) is also the call's own timeout. Less a tenth
	// of it (at most 10 seconds), it replaces the conversation's
	// Tools.Timeout (1 minute by default). So the tool may run nearly until
	// the activity's deadline. A call still running then is answered as
	// timed out, not retried and run again. A tool's own timeout
	// (tools.Options.Timeout; a Command tool's, 30 seconds by default)
	// still bounds its calls. With no timeout set here, the call's timeout
	// is the conversation's Tools.Timeout, as in a Send.
	ToolActivity workflow.ActivityOptions
	// ToolActivities are the activity options of the named tools, instead
	// of ToolActivity: a TaskQueue of workers near a database, say, or
	// longer timeouts. Their zero fields take the defaults ToolActivity's
	// take, field by field (not ToolActivity's values). A timeout set in
	// them is the call's own, as ToolActivity's is. {StartToCloseTimeout:
	// time.Hour} lets the tool run an hour, with a heartbeat timeout of a
	// minute.
	ToolActivities map[string]workflow.ActivityOptions
	// TurnsPerRun bounds the model calls of one workflow run: the workflow
	// then continues as new from the conversation's State, so that its
	// event history stays small. 0 means DefaultTurnsPerRun. A run also
	// continues as new when Temporal suggests it.
	TurnsPerRun int
	// PayloadLimit is the largest payload, in bytes, the workflow and its
	// activities hand to Temporal, whose server refuses one over its
	// limit.blobSize.error (2 MiB by default). 0 means
	// DefaultPayloadLimit. The size is that of Temporal's default data
	// converter: with a codec that adds to a payload, lower the limit.
	//
	// A tool result over it becomes an error result, which the model
	// reads, saying so; the tool ran and is not run again. Without the
	// check, the activity would fail at completion and each retry would
	// run the tool again. A model request over it fails the workflow with
	// a non-retryable ApplicationError of type PayloadTooLargeType, with
	// no details; without the check, its workflow task would fail again
	// and again.
	//
	// NoPayloadLimit turns the check off. Set it when every worker and
	// client has a claim check: DataConverter, or another codec that stores
	// large payloads elsewhere. Temporal's docs call it the Claim Check
	// pattern. Payloads then reach Temporal as keys.
	PayloadLimit int
	// Agents are the agents (package agenttool) whose calls run as child
	// workflows, by Name: the worker reads their Model, System, Tools,
	// Limits, Options and Client (the worker's client if nil). Each is
	// also a tool of the registry that calls it, made with agenttool.New,
	// which gives its calling model the tool's schema. A call of an agent
	// not listed here runs in one tool activity (see the package doc).
	Agents []agenttool.Agent
}

// Agent runs conversations as Temporal workflows on the workers that
// register it. It holds the Bedrock client and the tool registry, which
// live in the worker. The workflow's code runs there too. It reads only
// the tools' names and schemas, to build the tool configuration. The
// activities call the model and run the tools.
type Agent struct {
	client converse.Client
	reg    *tools.Registry
	opts   Options
	agents map[string]agenttool.Agent // Options.Agents by Name
}

// New returns an Agent calling the model through client (a
// *bedrockruntime.Client; its retries are turned off for each call, as
// Temporal owns them) and offering the tools of reg. A quota.Limiter's
// client paces each model activity and counts its throttled attempts;
// it makes a throttled call again itself, within the activity.
func New(client converse.Client, reg *tools.Registry, optFns ...func(*Options)) *Agent {
	a := &Agent{client: client, reg: reg}
	for _, fn := range optFns {
		fn(&a.opts)
	}
	a.agents = map[string]agenttool.Agent{}
	for _, def := range a.opts.Agents {
		a.agents[def.Name] = def
	}
	return a
}

// Register registers the workflow and its activities, under their names,
// with a worker.
func (a *Agent) Register(r worker.Registry) {
	r.RegisterWorkflowWithOptions(a.Workflow, workflow.RegisterOptions{Name: WorkflowName})
	r.RegisterActivityWithOptions(a.Model, activity.RegisterOptions{Name: ModelActivityName})
	r.RegisterActivityWithOptions(a.Tool, activity.RegisterOptions{Name: ToolActivityName})
	r.RegisterActivityWithOptions(a.CountTokens, activity.RegisterOptions{Name: CountActivityName})
}

// Input starts a workflow: a conversation with a new prompt, or one to
// resume.
type Input struct {
	// ModelID is the model, as for converse.New. With a State it may be
	// left empty: the State's model is taken (a different one is an
	// error). Without a State it is required: the workflow fails at once
	// without it.
	ModelID string
	// Prompt is the user's message. Empty, the conversation of State is
	// resumed (converse.Conversation.Resume) with Decisions.
	Prompt string
	// State, if not nil, is the conversation so far, from the Result of an
	// earlier workflow or converse.Conversation.State.
	State *converse.State
	// Decisions decide the pending calls of a paused State: approvals, and
	// answers to questions.
	Decisions []converse.Decision
	// Turns, Usage and CostUSD are what the runs before this one counted,
	// when a workflow continues as new; zero otherwise. A nil CostUSD after
	// a run is an unknown cost (a model without prices).
	Turns   int
	Usage   converse.Usage
	CostUSD *float64 `json:",omitempty"`
	// Agent is the Name of the agent of Options.Agents whose conversation
	// this is, which a parent workflow sets for its child; empty for the
	// worker's own conversation.
	Agent string `json:",omitempty"`
	// Budget, if not nil, is the Budget of the conversation instead of
	// Options.Conversation's: a parent sets its child's to what its own
	// Budget left the call, over the agent's Limits (agenttool.Agent.Budget).
	Budget *converse.Budget `json:",omitempty"`
}

// Result is the outcome of a workflow, a converse.Result in Temporal's
// JSON. It holds the answer, and the model calls of all its runs and their
// usage summed. It holds the conversation's State, to start the next
// workflow of the same conversation with.
type Result struct {
	Text       string
	StopReason types.StopReason
	Turns      int
	// Usage sums the usage of the turns of all runs (their TurnEnd
	// events), and what the tools reported (converse.Caller.ReportUsage), as
	// converse.Result.Usage does a Send's.
	Usage converse.Usage
	// CostUSD is what Usage cost, as converse.Result.CostUSD counts it;
	// nil when a model's prices are unknown.
	CostUSD *float64
	State   *converse.State
	// Model is the model that answered the last turn: the conversation's,
	// PrepareTurn's, or a fallback model (converse.Result.Model).
	Model string
}

// Status is what the StatusQueryName query answers while a workflow runs.
type Status struct {
	// Turn is the number of the last model call, counted over all runs.
	Turn int
	// Pending are the calls waiting for a decision (DecideSignalName):
	// an approval, or the answer to their Question. Those of an agent's
	// child workflow are named by their path ("o1/t2").
	Pending []converse.Call
	// Usage sums the tokens of the turns so far, and those the tools
	// reported (converse.Caller.ReportUsage), as Result.Usage.
	Usage converse.Usage
}

// conversationOptions are the converse options of every conversation the
// agent builds.
func (a *Agent) conversationOptions() converse.Options {
	var o converse.Options
	if a.opts.Conversation != nil {
		a.opts.Conversation(&o)
	}
	return o
}

var defaultRetry = &temporal.RetryPolicy{
	InitialInterval:    time.Second,
	BackoffCoefficient: 2,
	MaximumInterval:    time.Minute,
	MaximumAttempts:    10,
}

// modelOptions are the activity options of a model call.
func (a *Agent) modelOptions() workflow.ActivityOptions {
	o := a.opts.ModelActivity
	if o.StartToCloseTimeout == 0 && o.ScheduleToCloseTimeout == 0 {
		o.StartToCloseTimeout = 5 * time.Minute
	}
	if o.RetryPolicy == nil {
		o.RetryPolicy = defaultRetry
	}
	return o
}

// toolOptions are the activity options of a call of the named tool, each
// zero field given its default, and the call's timeout: the timeout the
// options set, if any (see Options.ToolActivity), zero otherwise.
func (a *Agent) toolOptions(name string) (o workflow.ActivityOptions, timeout time.Duration) {
	o, ok := a.opts.ToolActivities[name]
	if !ok {
		o = a.opts.ToolActivity
	}
	timeout = o.StartToCloseTimeout
	if timeout == 0 {
		timeout = o.ScheduleToCloseTimeout
	}
	if timeout == 0 {
		o.StartToCloseTimeout = 10 * time.Minute
	}
	if o.HeartbeatTimeout == 0 {
		o.HeartbeatTimeout = time.Minute
	}
	if o.RetryPolicy == nil {
		o.RetryPolicy = defaultRetry
	}
	return o, timeout
}
