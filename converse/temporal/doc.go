// Package temporal runs Amazon Bedrock Converse conversations as Temporal
// workflows: durable execution, so that a conversation survives the crash
// of the process running it, its work is shared by a fleet of workers, and
// an approval may wait for days while holding nothing.
//
// It is a Go module of its own, github.com/tooluse/bedrock/converse/temporal,
// so that the users of the core module do not download Temporal. It pins
// go.temporal.io/sdk v1.47.0 and go.temporal.io/api v1.63.5 (its tests run
// a real server in process, go.temporal.io/server/temporaltest v1.32.0,
// which newer SDKs do not compile against).
//
// # The worker and the starter
//
// A worker holds an [Agent]: the Bedrock client and the tool registry.
// Agent.Register registers the workflow ([WorkflowName]) and its two
// activities. A starter, any process with a Temporal client, starts the
// workflow with an [Input] and gets a [Result]:
//
//	agent := temporal.New(bedrockruntime.NewFromConfig(cfg), reg)
//	w := worker.New(c, "agents", worker.Options{})
//	agent.Register(w)
//	err := w.Run(worker.InterruptCh())
//
//	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "agents"},
//		temporal.WorkflowName, temporal.Input{ModelID: modelID, Prompt: "What is 6 times 7?"})
//	var res temporal.Result
//	err = run.Get(ctx, &res)
//
// # What runs where
//
// The loop runs in the workflow, driven by the step API of package
// converse (converse.Step): the conversation there has no client, no
// session, no telemetry and no events. Its tool configuration is built
// from the registry of the worker the workflow's code runs on: every worker
// of a task queue must hold the same registry and Options, as a replay on
// another worker must decide the same. The model call is an activity
// ([Agent.Model]) calling Converse with the SDK's retries off, so that
// Temporal alone retries, by the activity's retry policy, what
// converse.Classify calls OutcomeRetry (throttling, 5xx, a model timeout); a
// ValidationException or AccessDeniedException fails at once. It sends the
// step's ModelCall as it is, model included: the model PrepareTurn chose, or
// one of ModelCalls.Fallback, which the conversation turns to as in a Send once
// the activity's retries are spent. Each tool call is an activity
// ([Agent.Tool]) whose ID is "tool/TURN/TOOLUSEID", the calls of a turn in
// parallel up to the conversation's Tools.Concurrency, each with the
// activity options of its tool (Options.ToolActivities: a task queue of
// workers near a database, say, or a longer timeout, which is the call's
// own too).
// MCP and Lambda tools are tools of the registry like any other: the worker
// holds their connections. The activities build no conversation: the model
// activity calls converse.CallModel, the tool activity runs its call with
// converse.NewExecutor's Executor, and their payloads are in Bedrock's wire
// JSON (package wirejson), so the module needs the core's public API only.
//
// # Failures
//
// A run that ends without an answer fails the workflow with a
// non-retryable ApplicationError whose type is "converse." and the
// converse.Outcome of its error: "converse.limit" for the turn limit or a
// budget, "converse.retry" for throttling that outlasted the retries, and
// so on (the table of package converse's doc, section Outcomes). Its
// details are the conversation's State, to go on from in a new workflow,
// and Bedrock's error code, if any.
//
// # At least once
//
// An activity whose result Temporal recorded is never run again: a
// completed call stays completed when a worker dies. But an activity runs
// at least once, not exactly once: a worker that dies while a tool runs, or
// after it returned but before Temporal recorded the result, leaves the
// call to be run again, from the start, on another worker, at its
// heartbeat timeout. A tool with side effects (a payment, an email) should
// therefore use tools.CallID(ctx), the call's toolUseId, which is the same
// in every attempt, as its idempotency key; a Send in one process, by
// contrast, never runs a call twice and answers an interrupted one as
// such (converse.ErrCallInterrupted).
//
// # Approvals, queries, long conversations
//
// A call that needs approval (tools.Options.RequireApproval, or
// converse.Options.ApprovalPolicy, which must then be deterministic) waits
// for its converse.Decision, in a [DecideSignalName] signal carrying a
// []converse.Decision, for as long as it takes. [StatusQueryName] answers a
// [Status]: the turn, the pending calls and the usage so far.
//
// Temporal limits a payload to 2 MB and an event history to 50 MB by
// default. A run continues as new from the conversation's State after
// Options.TurnsPerRun model calls, or when Temporal suggests it; and with
// [DataConverter] on every client (a [ClaimCheck] in [Blobs]), a history,
// tool result or image larger than [DefaultClaimThreshold] travels by
// reference: Temporal keeps its SHA-256, the blob store the bytes.
//
// # Telemetry
//
// Spans and metrics come from the activities only (the model call's chat
// span, each tool's execute_tool span, as in a Send, from the
// TracerProvider and MeterProvider of Options.Conversation), never from
// the workflow's code, which Temporal replays.
package temporal
