// Package temporal runs Amazon Bedrock Converse conversations as Temporal
// workflows. Their execution is durable: a conversation survives the crash
// of the process running it, and its work is shared by a fleet of workers.
// An approval may wait for days while holding nothing.
//
// It is a Go module of its own, github.com/tooluse/bedrock/converse/temporal,
// so that the users of the core module do not download Temporal. It pins
// go.temporal.io/sdk v1.47.0 and go.temporal.io/api v1.63.5 (its tests run
// a real server in process, go.temporal.io/server/temporaltest v1.32.0,
// which newer SDKs do not compile against).
//
// # The worker and the starter
//
// A worker holds an [Agent]: the Bedrock client and the tool registry, MCP
// and Lambda tools included. Agent.Register registers the workflow
// ([WorkflowName]) and its three activities:
//
//	reg, _ := tools.NewRegistry(tools.Builtins()...)
//	agent := temporal.New(bedrockruntime.NewFromConfig(cfg), reg, func(o *temporal.Options) {
//		o.Conversation = func(o *converse.Options) { o.Tools.Concurrency = 4 }
//		// query_db may run an hour (its heartbeat timeout stays a minute):
//		o.ToolActivities = map[string]workflow.ActivityOptions{"query_db": {TaskQueue: "near-the-db", StartToCloseTimeout: time.Hour}}
//		o.PayloadLimit = temporal.NoPayloadLimit // the clients' DataConverter has a claim check
//	})
//	c, _ := client.Dial(client.Options{DataConverter: temporal.DataConverter(temporal.DirBlobs("/shared/blobs"))})
//	w := worker.New(c, "agents", worker.Options{})
//	agent.Register(w)
//	err := w.Run(worker.InterruptCh())
//
// A starter, any process with a Temporal client of the same data
// converter, starts the workflow with an [Input] and gets a [Result]:
//
//	run, _ := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "agents"},
//		temporal.WorkflowName, temporal.Input{ModelID: modelID, Prompt: "Mail ops the weather in Paris."})
//	// A call that needs approval waits, for days if need be, for its decision:
//	_ = c.SignalWorkflow(ctx, run.GetID(), "", temporal.DecideSignalName, []converse.Decision{converse.Call{ID: "tooluse_1"}.Approve()})
//	var res temporal.Result // Text, StopReason, Turns, Usage summed, the Model that answered, and the State to go on from
//	err := run.Get(ctx, &res)
//
// An Input with a State (the next prompt of a conversation, or Decisions
// for a paused one) takes the State's model when ModelID is empty. Without
// a State, ModelID is required: an Input lacking it fails the workflow at
// once, before anything runs.
//
// # What runs where
//
// The loop runs in the workflow, driven by the step API of package converse
// (converse.Step): the conversation there has no client, no session, no
// telemetry and no events. Its tool configuration is built from the
// registry of the worker the workflow's code runs on. So every worker of a
// task queue must hold the same registry and Options, as a replay on
// another worker must decide the same.
//
// The model call is an activity ([Agent.Model]) calling Converse with the
// SDK's retries off. So Temporal alone retries, by the activity's retry
// policy, what converse.Classify calls OutcomeRetry (throttling, 5xx, a
// model timeout). A ValidationException or AccessDeniedException fails at
// once. It sends the step's ModelCall as it is, model included: the model
// PrepareTurn chose, or one of ModelCalls.Fallback. A fallback model is
// tried once the activity's retry policy is spent, where Send falls back
// after the SDK's retries (TestWorkflowFallsBackAsSendDoes). The requests
// are those Send sends (TestWorkflowSendsWhatSendSends).
//
// With converse.ContextPolicy.CountTokens, a step's token count is an
// activity too ([Agent.CountTokens]), with the model activity's options,
// calling CountTokens through the agent's client. A count that fails, or
// a client without CountTokens, leaves the step to its estimate, as in a
// Send (TestWorkflowCountsAsSendCounts).
//
// Each tool call is an activity ([Agent.Tool]) whose ID is
// "tool/TURN/TOOLUSEID", the calls of a turn in parallel up to the
// conversation's Tools.Concurrency. Each has the activity options of its
// tool (Options.ToolActivities): a task queue of workers near a database,
// say, or a longer timeout. The zero fields of a tool's activity options
// take their defaults one by one: 10 minutes from start to close, a
// heartbeat timeout of a minute, 10 attempts. A timeout set there is the
// call's own too, in place of the conversation's Tools.Timeout (a minute by
// default), less a tenth of it (at most 10 s). So a tool still running near
// its activity's deadline is answered as timed out, not retried and run
// again. A tool's own timeout (tools.Options.Timeout; a Command tool's is
// 30 s unless set) still bounds it.
//
// MCP and Lambda tools are tools of the registry like any other: the worker
// holds their connections. The activities build no conversation. The model
// activity calls converse.CallModel. The tool activity runs its call with
// converse.NewExecutor's Executor. Their payloads are in Bedrock's wire
// JSON (package wirejson). So the module needs the core's public API only.
//
// # Failures
//
// A run that ends without an answer fails the workflow with a
// non-retryable ApplicationError. Its type is "converse." and the
// converse.Outcome of its error: "converse.limit" for the turn limit or a
// budget, "converse.retry" for throttling that outlasted the retries, and
// so on. The table is in package converse's doc, section Outcomes. Its
// details are the conversation's State, to go on from in a new workflow,
// and Bedrock's error code, if any. A model request too large for
// Temporal is the exception (see Payload and history limits).
//
// # At least once
//
// An activity whose result Temporal recorded is never run again: a
// completed call stays completed when a worker dies. But an activity runs
// at least once, not exactly once. A worker may die while a tool runs, or
// after it returned but before Temporal recorded the result. The call is
// then run again, from the start, on another worker, at its heartbeat
// timeout. A tool with side effects (a payment, an email) should therefore
// use tools.CallID(ctx) as its idempotency key: the call's toolUseId, the
// same in every attempt. A Send in one process, by contrast, never runs a
// call twice and answers an interrupted one as such
// (converse.ErrCallInterrupted).
//
// # Approvals, questions, queries, long conversations
//
// A call that needs approval (tools.Options.RequireApproval, or
// converse.Options.ApprovalPolicy, which must then be deterministic) waits
// for its converse.Decision, in a [DecideSignalName] signal carrying a
// []converse.Decision, for as long as it takes. [StatusQueryName] answers a
// [Status]: the turn, the pending calls and the usage so far.
//
// A tool may ask the user a question in the middle of its call: it returns
// a *tools.InputRequiredError, as package mcptools does for an MCP
// server's elicitation. The tool activity then replies with the question
// ([ToolReply].Question), and the call waits as an approval does. Status
// lists it with its converse.Call.Question, untrusted text. The answer
// comes in the same signal: converse.Call.Accept with a JSON object that
// fits the question's schema, converse.Call.Decline or Dismiss. The call
// then runs again, an activity "tool/TURN/TOOLUSEID/2" (3 after a second
// question), and its tool reads the answer with tools.AnswerOf. The model
// sees what came of it, a decline included. A set of decisions that
// converse.Conversation.Decide refuses (an answer that breaks its
// question's schema, say) is logged and dropped, and the calls wait for
// new ones (TestWorkflowQuestion, TestQuestionOnTheServer).
//
// A tool that runs an agent of its own (package agenttool) reports that
// agent's usage with converse.Caller.ReportUsage. The tool activity carries it in
// its reply, and the workflow counts it in the conversation's usage, its
// Budget and the Result, as a Send does.
//
// # Agents as child workflows
//
// An agent of Options.Agents (an agenttool.Agent, also a tool of the
// registry that calls it) runs each call as a child workflow of the same
// WorkflowName. Its ID is the caller's workflow ID, "/", the call's
// toolUseId ("coordinator/o1"). Its Input names the agent, whose Model,
// System, Tools, Limits and Options (over Options.Conversation) its
// conversation has; its model calls go through the agent's Client. Its
// steps are activities of the child. A worker that dies mid-agent thus
// runs none of the agent's completed calls again
// (servertest/TestWorkerKilledDuringAnAgent). The child's final text
// answers the call, and its Result's usage counts in the caller's, as a
// tool's reported usage does.
//
// A call of the agent that needs a decision pauses the child, which holds
// no worker while it waits. The child tells its parent with a
// [NestedSignalName] signal. The parent's Status lists the call by its
// path ("o1/t2"; an agent's agent's, "o1/b1/t2"). A Decide signal to the
// top workflow goes down by the path's first ID, to the child running that
// call (TestWorkflowAgentApproval, servertest/TestAgentApprovalOnTheServer).
// Cancelling the parent cancels its children, as Temporal's child
// workflows are by default.
//
// We chose a child workflow over running the agent's steps as activities
// of the parent. Those would interleave two loops in one event history,
// which would grow toward Temporal's limit with every nested step. A child
// has its own history, continues as new on its own, and replays alone.
// The agent's Budget is as agenttool's in a Send, over its own Limits: its
// Send limits and wall time are what the caller's Budget left its call
// when the step handed it out (converse.Step.BudgetLeft). Calls of one step
// in parallel do not see each other's usage. With nothing left the agent is
// not started. Its usage and cost count in its caller's Result. A structured
// agent (agenttool.NewStructured) is not run so: its call runs in one tool
// activity, where a pause is the call's error result.
//
// # Payload and history limits
//
// Temporal limits a payload to 2 MiB (its server's limit.blobSize.error)
// and an event history to 50 MB by default. A run continues as new from
// the conversation's State after Options.TurnsPerRun model calls (100 by
// default), or when Temporal suggests it. With [DataConverter] on every
// client (a [ClaimCheck] in [Blobs]), a history, tool result or image
// larger than [DefaultClaimThreshold] travels by reference: Temporal keeps
// its SHA-256, the blob store the bytes. The store is content-addressed
// and checked on read.
//
// Without a claim check, the agent checks sizes before Temporal refuses
// them (Options.PayloadLimit). A tool result over the limit becomes an
// error result, and the tool is not run again. A model request over it
// fails the run with a [PayloadTooLargeType] error naming the claim check.
// With a claim check, set Options.PayloadLimit to [NoPayloadLimit].
//
// # Telemetry
//
// Spans and metrics come from the activities only, never from the
// workflow's code, which Temporal replays. They are the model call's chat
// span and each tool's execute_tool span, as in a Send. They come from the
// TracerProvider and MeterProvider of Options.Conversation.
//
// # Tests
//
// The tests use Temporal's time-skipping testsuite. Those of package
// servertest run a real server in process (temporaltest): a worker killed
// with SIGKILL during a tool, 50 conversations over 3 workers, a history
// past 5 MB. The Makefile's targets temporal and test run them; the
// server's first build takes minutes.
package temporal
