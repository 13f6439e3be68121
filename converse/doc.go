// Package converse executes Amazon Bedrock Converse tool calls and drives a
// whole tool-use conversation.
//
// A Converse response holds text and zero or more toolUse blocks. An
// [Executor] answers every toolUse with exactly one toolResult (same
// toolUseId, the tool's output as JSON text, status success or error), running
// the calls of a turn concurrently, each on a goroutine of its own so that a
// call that hangs can be abandoned at its timeout. A [Conversation] sends the history with
// the tool configuration, appends the assistant message, runs the requested
// tools, sends all results back in one user message, and calls the model
// again until it stops asking for tools:
//
//	cfg, _ := config.LoadDefaultConfig(ctx)
//	client := bedrockruntime.NewFromConfig(cfg, converse.ClientOptions)
//	reg, _ := tools.NewRegistry(tools.Builtins()...)
//	res, err := converse.Run(ctx, client, "us.anthropic.claude-sonnet-4-20250514-v1:0", reg,
//		"What time is it?")
//
// The client is used as it is, however it authenticates: with the SigV4
// credentials of the AWS config, or with a Bedrock API key, which
// bedrockruntime.NewFromConfig reads from AWS_BEARER_TOKEN_BEDROCK itself
// and then sends as a bearer token (over HTTPS only) in preference to SigV4.
//
// # Failures
//
// A tool that fails, panics, hangs past its timeout, is unknown, or gets
// input that is not an object or breaks its schema is answered with an error
// result for that call only; the conversation goes on and the model can
// adjust. Everything a tool returns is untrusted: a panic of its error's
// Error method or of its output's MarshalJSON is recovered like a panic of
// the tool, and a tool that returns after its deadline is answered as timed
// out, whatever it returned.
//
// # Configuration
//
// The package follows the AWS SDK's convention, which its users meet beside
// it: a value made by a constructor takes functions that set an exported
// Options struct (New, as bedrockruntime.NewFromConfig), and a value you
// build and hold is configured by its fields, with a useful zero value (an
// Executor, like an http.Server). The settings of tool execution are one
// struct, [ToolOptions], that an Executor embeds and Options holds as Tools,
// so each setting has one name and one doc comment:
//
//	e := &converse.Executor{Tools: reg, ToolOptions: converse.ToolOptions{Concurrency: 1}}
//	c := converse.New(client, modelID, reg, func(o *converse.Options) { o.Tools.Timeout = 10 * time.Second })
//
// # Limits
//
// [ToolOptions].Concurrency (8 by default) bounds the tool code really
// running. A call answered at its timeout whose tool ignores its
// context is abandoned, not stopped: it keeps its slot until the tool
// returns, across the Sends of a Conversation, and a call that cannot get a
// slot before its own timeout is answered as timed out, naming the calls
// holding the slots. [Executor.Abandoned] counts the abandoned calls still
// running; [ToolEnd].Abandoned and a log line report each one.
//
// The output of a call sent to the model is capped at 1 MiB unless the tool
// (tools.Options.MaxOutput) or [ToolOptions].MaxOutput sets another limit. Longer output, or
// error text, is cut on a rune boundary, ends with a marker such as
// "… [truncated: 104857602 bytes, first 1048576 kept]", and is sent as text,
// as cut JSON is no JSON; [ToolEnd].Truncated reports it. The images and
// documents of a tools.Result go inside the call's toolResult, beside its
// output; the cap does not count them: Bedrock's limits and the model
// family's rules bound them, and media past those are replaced by text
// placeholders, never a rejected request (see [MediaInfo]).
//
// # History
//
// [Conversation.History] never waits for a model call or a tool: during a
// Send it returns the history at the last step boundary, so it may be called
// from OnEvent or from another goroutine; at a [TurnEnd] it ends with the
// reply the event reports (see its doc for the exceptions), so a transcript
// can be redrawn then. Go errors are for the caller: Bedrock API errors (wrapped with the
// turn number, usable with errors.As against *types.ThrottlingException and
// the rest), cancellation, and the sentinels [ErrMaxTurns], [ErrMaxTokens],
// [ErrMalformedToolUse], [ErrMalformedModelOutput],
// [ErrContextWindowExceeded] and [ErrStreamTruncated]; [Classify] sorts
// them (see Outcomes).
//
// # Resuming and approvals
//
// A Conversation is always in one of these states, and its history is
// always the start of a request Bedrock accepts:
//
//   - empty, or idle (ending with a final answer): Send is allowed; Resume
//     returns [ErrNothingToResume].
//   - interrupted: a Send or Resume failed (a Bedrock error, a cancelled
//     context, a failed Store save), or a Send's final
//     answer after a tool round had no content (Bedrock rejects an empty
//     message, so it is not kept). Every completed step is kept: the prompt,
//     and each tool exchange (the assistant's toolUse turn with the one user
//     message of all its results); only the step in progress is dropped,
//     except that a tool round that failed part way (a failed save) keeps
//     its open turn: the results of the calls that returned. Resume goes on
//     without a new user message: it runs the calls of that turn that never
//     started, answers those cut off (running when the process died,
//     restored from a Store) with an error result saying so, never running
//     them again, and calls the model on the kept history, so no completed
//     call runs twice. Send is refused with [ErrInterrupted] once a tool
//     exchange or an open turn was kept; a prompt left unanswered is
//     replaced by the next Send (or answered by Resume). [Conversation.Stop]
//     ends the task instead.
//   - stopped: the user or a limit ended the task: [Conversation.Stop], a
//     [TurnPlan] whose Stop is set, a [Budget] limit or the turn limit
//     ([ErrMaxTurns]). The calls left open are answered with an error
//     result saying they were stopped, in plain words, never run; the
//     history may end with tool results ([State].Stopped says so). The next
//     Send adds its prompt after them at once, so the model hears of the
//     stopped calls and the new prompt in one request; Resume instead goes
//     on with the stopped task (after a limit was raised, say). A driver
//     that cancels a Send to stop it gives [ErrStopped] as the context's
//     cause, so that a call it cuts off says so, then calls Stop.
//   - paused: calls that need approval (tools.Options.RequireApproval, or
//     Options.ApprovalPolicy for a call) wait for a decision: there is no
//     Options.Approver, or it answered [Paused] for them, and Send and Resume
//     return a [*PausedError] listing them (State().Pending lists them too).
//     The calls of the same turn that need none have run, once, and their
//     results are kept. An Options.Approver that fails pauses the
//     conversation as well, with the calls it did not decide pending, but
//     Send returns its error and nothing of the turn has run yet. Only
//     Resume with one [Decision] per pending call ([Approve] or [Deny]) goes
//     on, running the approved calls and any others of the turn not yet
//     run; a missing, unknown or repeated decision is [ErrDecision], and
//     Send is [ErrPaused] until Stop answers the pending calls as not run.
//     A denied call is answered "Error: the call was denied by <who>:
//     <reason>".
//
// [Conversation.State] snapshots a conversation as a [State], which
// marshals to a versioned JSON form in Bedrock's wire JSON; [Restore]
// rebuilds it, possibly in another process. With Options.Session (in a Store such
// as a filestore.Store) the state is saved at every step
// boundary, so a crash loses at most the step in progress: a call that was
// running when the process died is answered on Resume with an error saying
// it was interrupted (its ToolEnd event carries [ErrCallInterrupted]),
// never run again.
//
// # Cost and length
//
// Every turn of a tool loop sends the whole history again. With
// Options.Cache, each request carries cachePoint blocks (after the
// tools, the system prompt and the newest user messages) so that a turn
// reads what the turn before wrote from Bedrock's prompt cache, billed at a
// tenth of the input price for Claude; only the models and fields of
// Bedrock's prompt caching table get them, and they are never kept in the
// history. Usage reports CacheReadInputTokens and CacheWriteInputTokens.
// With Options.Context (a [ContextPolicy]) a history that outgrows the
// model's context window is trimmed before the call, or when Bedrock
// reports the overflow, and the call made again: the oldest large tool
// results are shortened, then the oldest exchanges dropped, whole, and
// optionally summarised; a [Trimmed] event reports each trim.
// Options.Budget (a [Budget]) bounds the tokens, tool calls, wall time and
// dollars of each Send and of the conversation, ending a Send at a step
// boundary with [ErrBudget]; [Result].CostUSD prices the usage
// ([modelinfo.PricesOf], or Options.Prices). Package quota paces the model calls of conversations
// by one quota of requests and tokens per minute, through their Client.
//
// # Retries
//
// Throttling and 5xx errors are retried by the SDK's retryer, not by this
// package. Configure it on the client:
//
//	client := bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
//		o.Retryer = retry.AddWithMaxAttempts(retry.NewStandard(), 8)
//		// or adaptive rate limiting for sustained throttling:
//		// o.Retryer = retry.NewAdaptiveMode()
//	})
//
// or with AWS_MAX_ATTEMPTS and AWS_RETRY_MODE=adaptive in the environment.
//
// A stalled model call is this package's to end: the SDK waits for it as
// long as its HTTP client does. Options.ModelCalls (a [CallPolicy]) sets
// deadlines to a call's first token and between a stream's events. A call
// past one fails with [ErrStalled], a retryable outcome, and its chat span
// has error.type "stalled". Such a call, or a stream cut by its
// connection, is made again while no tool of its turn has started, with
// back-off and jitter, then sent to the fallback models. Hedge sends a
// slow call a second time and keeps the first to answer. [ModelRetry] and
// [Hedged] events report both.
//
// # Outcomes
//
// [Classify] sorts the error of a Send, a Resume or a step into an
// [Outcome], and the hosts of this module answer each one alike. A limit,
// a pause and a stop are normal ends. Send still returns an error for
// them, with the Result of what was done; serve answers them 200, never a
// 5xx, and the command exits with a status of their own.
//
//	Outcome          agentcore, serve:          converse:    converse/temporal
//	                 HTTP status, "status"      exit status  workflow failure
//	nil (an answer)  200 "success"              0            none: a Result
//	OutcomeLimit     200 "limit"                5            converse.limit
//	OutcomePaused    200 "paused"               6            none: it waits
//	OutcomeStopped   200 "stopped"              130          converse.stopped
//	OutcomeRetry     503 "error", Retry-After   3            converse.retry
//	OutcomeCaller    400 "error"; 502 if        4            converse.caller
//	                 Bedrock's error
//	OutcomeConflict  409 "error"                7            converse.conflict
//	OutcomeInternal  500 "error"                1            converse.internal
//
// The second column is package agentcore's Handler, which the command's
// converse serve runs: a limit's answer names the limit and holds the text
// and usage so far, and a failure of its Store is a 500 unless a conflict.
// A limit or a stop leaves the task stopped (see the states above), so the
// session's next prompt goes to the model at once; a session a failure
// interrupted is resumed first, the answer's "resumed" reporting it.
// The command exits 2 for a usage error. A Temporal workflow that ends
// without an answer fails with a non-retryable ApplicationError of that
// type (a retry would run its tools again), whose details hold the State
// to go on from; its model activity's failure is retryable for
// OutcomeRetry alone.
//
// # What Bedrock accepts
//
// The loop keeps to Bedrock's rules, so that a request it builds is never
// rejected for its form: a toolConfig accompanies every request whose
// history holds tool blocks, echoed blocks are echoed as Bedrock wants
// them, and the status field, tool choice, media, sampling and thinking
// settings are checked per model family. The rules, with their sources,
// are kept beside the tables that decide them, in the internal models
// package (see ARCHITECTURE.md); a forcing Options.ToolChoice that Bedrock
// would reject is an [ErrToolChoice] before any model call, and the
// settings the loop passes on as they are (Options.Request) are answered
// by bedrocktest with Bedrock's error.
//
// Offline tests of code built on this package use the bedrocktest
// subpackage, a local Bedrock Runtime that the real SDK client talks to.
package converse
