// Package converse executes Amazon Bedrock Converse tool calls and drives a
// whole tool-use conversation.
//
// A Converse response holds text and zero or more toolUse blocks. An
// [Executor] answers every toolUse with exactly one toolResult: the same
// toolUseId, the tool's output as JSON text, status success or error. It
// runs the calls of a turn concurrently, each on a goroutine of its own, so
// that a call that hangs can be abandoned at its timeout. A [Conversation]
// sends the history with the tool configuration and appends the assistant
// message. It runs the requested tools, sends all results back in one user
// message, and calls the model again until it stops asking for tools:
//
//	cfg, _ := config.LoadDefaultConfig(ctx)
//	client := bedrockruntime.NewFromConfig(cfg, converse.ClientOptions)
//	reg, _ := tools.NewRegistry(tools.Builtins()...)
//	conv := converse.New(client, "us.anthropic.claude-sonnet-4-20250514-v1:0", reg)
//	res, err := conv.Send(ctx, "What time is it?")
//
// Each [Conversation.Send] continues the conversation with a prompt. It
// uses Converse, or ConverseStream with Options.Stream. A Conversation keeps a history that is always a valid
// Bedrock conversation and sums token usage over turns.
//
// The client is used as it is, however it authenticates. It may use the
// SigV4 credentials of the AWS config, or a Bedrock API key.
// bedrockruntime.NewFromConfig reads the key from AWS_BEARER_TOKEN_BEDROCK
// itself. It then sends it as a bearer token (over HTTPS only), in
// preference to SigV4.
//
// # Failures
//
// A tool that fails is answered with an error result for that call only,
// and the conversation goes on, so the model can adjust. So is a tool that
// panics, hangs past its timeout or is unknown, and a call whose input is
// not an object or breaks the schema. The result has status error and text
// starting with "Error:" that says what went wrong. The stack of a panic
// goes to Options.Logger, never to the model.
//
// Everything a tool returns is untrusted. A panic of its error's Error
// method or of its output's MarshalJSON is recovered like a panic of the
// tool. A tool that returns after its deadline is answered as timed out,
// whatever it returned.
//
// Go errors are for the caller, wrapped with the turn ("converse: turn 3:
// ..."). They are Bedrock API errors (use errors.As with
// *types.ThrottlingException, *types.ValidationException and the rest),
// cancellation, and the sentinels. The sentinels are [ErrMaxTurns],
// [ErrMaxTokens] (max_tokens inside a tool call: the cut-off call is not
// run), [ErrMalformedToolUse], [ErrMalformedModelOutput],
// [ErrContextWindowExceeded] and [ErrStreamTruncated]. [Classify] sorts
// them (see Outcomes). After an error the conversation keeps every
// completed tool exchange, and [Conversation.Resume] goes on from there.
//
// # Configuration
//
// The package follows the AWS SDK's convention, which its users meet beside
// it. A value made by a constructor takes functions that set an exported
// Options struct ([New], as bedrockruntime.NewFromConfig). A value you build
// and hold is configured by its fields, with a useful zero value (an
// [Executor], like an http.Server). The settings of tool execution are one
// struct, [ToolOptions], that an Executor embeds and Options holds as
// Tools, so each setting has one name and one doc comment:
//
//	e := &converse.Executor{Tools: reg, ToolOptions: converse.ToolOptions{Concurrency: 1}}
//	c := converse.New(client, modelID, reg, func(o *converse.Options) { o.Tools.Timeout = 10 * time.Second })
//
// # Limits
//
// [ToolOptions].Concurrency (8 by default; 1 is sequential) bounds the tool
// code really running. A call answered at its timeout whose tool ignores
// its context is abandoned, not stopped. It keeps its slot until the tool
// returns, across the Sends of a Conversation. A call that cannot get a
// slot before its own timeout is answered as timed out, naming the calls
// holding the slots. [Executor.Abandoned] counts the abandoned calls still
// running; [ToolEnd].Abandoned and a log line report each one.
//
// The output of a call sent to the model is capped at 1 MiB, unless the
// tool (tools.Options.MaxOutput) or [ToolOptions].MaxOutput sets another
// limit. Longer output, or error text, is cut on a rune boundary. It ends
// with a marker such as "… [truncated: 104857602 bytes, first 1048576
// kept]", and is sent as text, as cut JSON is no JSON; [ToolEnd].Truncated
// reports it. The cap does not count images and documents (see Images and
// documents).
//
// # Events and history
//
// Options.OnEvent observes a conversation. It receives [Text], [ToolStart],
// [ToolEnd], [TurnEnd], [StreamFallback], [ModelFallback], [ModelRetry],
// [Hedged], [ApprovalRequested], [ApprovalDecided], [Resumed],
// [StateSaved], [Trimmed] and [AnswerRejected], in order, never
// concurrently.
//
// [Conversation.History] never waits for a model call or a tool. During a
// Send it returns the history at the last step boundary, so it may be
// called from OnEvent or from another goroutine. At a [TurnEnd] it ends
// with the reply the event reports (see its doc for the exceptions), so a
// transcript can be redrawn then.
//
// # Resuming and approvals
//
// A Conversation is always in one of these states, and its history is
// always the start of a request Bedrock accepts:
//
//   - empty, or idle (ending with a final answer): Send is allowed; Resume
//     returns [ErrNothingToResume].
//   - interrupted: a Send or Resume failed (a Bedrock error, a cancelled
//     context, a failed Store save). So did a Send whose final answer after
//     a tool round had no content, as Bedrock rejects an empty message.
//     Every completed step is kept: the prompt, and each tool exchange (the
//     assistant's toolUse turn with the one user message of all its
//     results). Only the step in progress is dropped. A tool round that
//     failed part way (a failed save) keeps its open turn: the results of
//     the calls that returned. Resume goes on without a new user message.
//     It runs the calls of that turn that never started. It answers the
//     calls cut off (running when the process died, restored from a Store)
//     with an error result saying so, never running them again. It then
//     calls the model on the kept history, so no completed call runs twice.
//     Send is refused with [ErrInterrupted] once a tool exchange or an open
//     turn was kept. A prompt left unanswered is replaced by the next Send
//     (or answered by Resume). [Conversation.Stop] ends the task instead.
//   - stopped: the user or a limit ended the task. That is
//     [Conversation.Stop], a [TurnPlan] whose Stop is set, a [Budget] limit
//     or the turn limit ([ErrMaxTurns]). The calls left open are answered
//     with an error result saying they were stopped, in plain words, never
//     run. The history may end with tool results ([State].Stopped says so).
//     The next Send adds its prompt after them at once, so the model hears
//     of the stopped calls and the new prompt in one request. Resume
//     instead goes on with the stopped task (after a limit was raised,
//     say). A driver that cancels a Send to stop it gives [ErrStopped] as
//     the context's cause, so that a call it cuts off says so, then calls
//     Stop.
//   - paused: calls that need approval wait for a decision. A call needs
//     one when its tool was made with tools.Options.RequireApproval, or
//     when Options.ApprovalPolicy picks it. Options.Approver decides in
//     process: approve, deny with a reason, or pause. Without one, or when
//     it answers [Paused], Send and Resume return a [*PausedError] listing
//     the pending calls (State().Pending lists them too). The calls of the
//     same turn that need none have run, once, and their results are kept.
//     An Approver that fails pauses the conversation as well, with the
//     calls it did not decide pending. Send then returns its error, and
//     nothing of the turn has run yet. Only Resume with one [Decision] per
//     pending call ([Call.Approve] or [Call.Deny]) goes on. It runs the approved calls
//     and any others of the turn not yet run. A missing, unknown or
//     repeated decision is [ErrDecision]. Send is [ErrPaused] until Stop
//     answers the pending calls as not run. A denied call is answered
//     "Error: the call was denied by <who>: <reason>", which the model sees.
//   - A call pauses the same way when its tool asks the user a question
//     while it runs: it returns a *tools.InputRequiredError, as package
//     mcptools does for an MCP server's elicitation. The call is pending
//     with its [Call].Question, untrusted text. Options.Approver answers
//     it in process, Resume across processes: [Call.Accept] with an answer that
//     fits the question's schema, [Call.Decline] or [Call.Dismiss]. An answer that
//     breaks the schema is [ErrDecision], and the tool never sees it. The
//     call then runs again with the answer (tools.AnswerOf), and the
//     model sees its result. A call asks at most ten questions in a Send
//     or Resume; the next one answers it with an error result. The step
//     API pauses a call too: [Executor.Run] returns the question in its
//     [CallResult], [Conversation.AnswerCalls] makes the call pending, and
//     [Conversation.Decide]'s answer hands it out again with its
//     [Call].Answer. [Executor.Execute] cannot pause a call: there the
//     question is an error result.
//   - A call pauses the same way when it runs a conversation of its own
//     that paused (an agent used as a tool; see package agenttool): its
//     tool returns that conversation's [*PausedError]. The caller's pending
//     calls are then the nested conversation's, each named by its path:
//     the caller's call ID, "/", the nested call's ID ("o1/t2"; two levels
//     down, "o1/b1/t2"). Resume takes a decision per path. The call then
//     runs again, and its tool resumes its conversation with the
//     decisions, which [Caller.Decisions] gives it. A tool that keeps the
//     paused conversation nowhere else sets the PausedError's State: the
//     caller's State carries it, as JSON too, and the call's next run gets
//     it back from [Caller.State]. In process, a nested conversation asks
//     the caller's Approver ([Caller.Approver]), with the call's path as
//     its ID.
//
// [Conversation.State] snapshots a conversation as a [State]. It marshals
// to a versioned JSON form, in Bedrock's wire JSON. [Restore] rebuilds it,
// possibly in another process, and Resume goes on with the decisions.
// ExampleConversation_Resume runs that offline against bedrocktest.
// Restore rejects a history Bedrock would refuse, such as a toolResult
// answering no toolUse. It also rejects one that would lose a block of a
// kind the SDK does not know. The error names the message and block.
//
// With Options.Session, a [Session] of a [Store] and an ID, the state is
// saved at every step boundary. A crash then loses at most the step in
// progress. A call that was running when the process died is answered on
// Resume with an error saying it was interrupted. Its ToolEnd event carries
// [ErrCallInterrupted], and it is never run again. Package filestore keeps
// a session in a file, package dynamostore in a DynamoDB item, for a fleet.
//
// Saves are versioned in every store. A state carries its session's
// Revision, and a Store saves only on top of the revision it loaded or last
// wrote. So two writers of one session never lose each other's steps: the
// second's Send stops with [ErrSessionChanged]. A store that is a [Holder]
// also holds the session while a Send or Resume runs. Another run then
// fails at once with [ErrSessionLocked], naming the holder.
// TestSurvivalProperty runs 60 seeded conversations on both stores. Each
// is stopped at random points and resumed, and each call runs at most once.
//
// # Hooks that act
//
// Options.OnEvent observes; four settings change what happens. Each acts at
// one place of the loop, so Send, Resume and the step API (an engine
// driving the steps) behave the same:
//
//   - ToolOptions.Middleware ([]ToolMiddleware, as Options.Tools.Middleware)
//     wraps every call of every kind of tool, in net/http style: a
//     [ToolMiddleware] is func(next [ToolHandler]) ToolHandler, the first
//     outermost. It may change a call's input, refuse it with a message the
//     model reads, retry it or redact its result. The call's timeout bounds
//     every next, a panic is recovered as a tool's, and the output is
//     capped. See ExampleToolMiddleware_refuse and its siblings.
//   - Options.PrepareTurn runs before each model call with a [TurnPlan].
//     For that call only, it may change ModelID, Offered (a subset of the
//     registry's tools), ToolChoice, System and InferenceConfig. It may set
//     Stop to end the Send, say once Answered holds a given tool's call.
//     The rules are applied after it, for the model called. Tools the
//     history calls stay described (as withdrawn). The status field and
//     tool-result media are sent as the family takes them, and cache
//     points go on the new prefix. A tool choice the model rejects fails
//     with [ErrToolChoice] before the call.
//   - Options.RepairCall may correct a call that would be answered as an
//     unknown tool or invalid input. The history shows the call as
//     repaired.
//   - The models of Options.ModelCalls.Fallback are tried in order when a
//     call fails with throttling (after the SDK's retries), a model not
//     ready or timed out, a stall, or the service unavailable. They are never tried on a validation
//     error. The history is re-encoded for the family of the model called.
//     [Result].Model, [TurnEnd].Model, the [ModelFallback] event and the
//     chat spans say which model answered. See
//     ExampleCallPolicy_fallback.
//
// With none of them set, the requests are byte for byte those of a
// conversation without hooks (TestRequestsWithoutHooks).
//
// # What Bedrock accepts
//
// The loop keeps to Bedrock's rules, so that a request it builds is never
// rejected for its form. The rules, with their sources, are kept beside the
// tables that decide them, in the internal models package (see
// ARCHITECTURE.md). Package bedrocktest answers a request that breaks them
// with Bedrock's error.
//
//   - Every toolUse gets exactly one toolResult, all in the single next
//     user message, paired by toolUseId. IDs such as
//     "functions.get_temperature:0" are fine. A repeated ID in one turn is
//     answered once, the repeat with an error result.
//   - The toolConfig goes with every request whose history holds tool
//     blocks. A conversation that offers no tools any more describes the
//     tools its history calls as withdrawn.
//   - Error results are never empty, and blank text blocks are never sent.
//   - Tool results never share a user message with text: Llama, Mistral
//     and Writer reject that.
//   - The status field is sent only to the families documented to accept
//     it: Anthropic Claude 3 and later, and Amazon Nova. The family is read
//     from the model ID, the inference-profile prefix (us., eu., apac.,
//     global., ...) or the ARN. ToolOptions.Status overrides.
//   - Echoed toolUse blocks carry only toolUseId, name and input. Real
//     responses add a type that Bedrock rejects when sent back.
//   - Everything else Bedrock sent is echoed exactly: reasoningContent with
//     its signature, redacted reasoning, citationsContent, and a server
//     tool's blocks. Blank text blocks are dropped. DeepSeek rejects
//     reasoning in a request, so its replies' reasoning is not kept, in the
//     history or in [Result].Message.
//   - The answer's text ([Result].Text, [Text] events) is that of every
//     block carrying generated text, in order. Those are text blocks and
//     the content of citationsContent blocks (documents or search results
//     with citations enabled, web grounding). [Result].Citations lists
//     their sources as citation.Citation values, through Converse and
//     ConverseStream alike (citation.FromMessage reads any message's).
//   - Server-side system tools (Options.SystemTools, such as Nova's
//     nova_grounding) join the toolConfig as systemTools. Bedrock runs
//     their calls itself and returns them in the assistant message: a
//     toolUse block of type server_tool_use, followed by its toolResult.
//     They are never run locally nor answered, and are echoed keeping their
//     type. A tool_use turn whose only calls are server calls ends the Send,
//     as an empty user message would be rejected.
//   - A forced tool choice (Options.ToolChoice) applies to the first turn
//     of a Send only, so it cannot loop. One that Bedrock would reject is
//     [ErrToolChoice] before any model call. The choices any and tool work
//     only on Claude 3 and later and Amazon Nova, and Mistral Large takes
//     any. Others (Llama, Cohere, ...) answer "This model doesn't support
//     the toolConfig.toolChoice.any field". Claude with thinking on answers
//     "Thinking may not be enabled when tool_choice forces tool use".
//     Thinking is on with "thinking" or "reasoning_config" of type enabled,
//     or "thinking" of type adaptive, in AdditionalModelRequestFields.
//   - temperature and topP are passed as given. Bedrock takes each from 0
//     to 1. It takes not both together on Claude Sonnet 4.5 and 4.6, Haiku
//     4.5, and Opus 4.5 and 4.6 ("temperature and top_p cannot both be
//     specified for this model").
//   - ToolOptions.JSONContent answers with json content blocks; a
//     non-object is wrapped as {"result": ...}. Output beside images or
//     documents stays text, as Nova takes a single JSON or text and images.
//
// # Structured output
//
// [Structured] ends a Send with a value of type T, its schema inferred as a
// tool's input is; [StructuredJSON] takes a JSON Schema known at run time.
// See ExampleStructured. Some models' Converse takes
// outputConfig.textFormat: Claude Sonnet 4.5, Haiku 4.5, and Opus 4.5 and
// 4.6, from Bedrock's user guide. They get the schema there. The others get
// a final tool, final_<type>, with toolChoice any on every turn: they may
// call other tools first but end only by calling it. Where Bedrock rejects
// any (Llama, or Claude with extended thinking on), the tool is offered
// with the default choice. The system prompt then tells the model to
// answer by calling it, and a text answer is sent back with that
// correction.
//
// The way is chosen for each request from the model it goes to. So a turn
// that falls back (CallPolicy.Fallback), or that PrepareTurn sends elsewhere,
// asks that model in the way it takes, and its reply is checked in that
// form. A request holding a document or search result with citations
// enabled takes the final tool, as structured outputs are incompatible with
// citations. A reply of reasoning alone is dropped and the model asked
// again.
//
// The answer is validated like a tool's input. One that fails goes back as
// an error ("Error: the answer does not match the schema: property
// "total": want number, got string"). The model corrects it within
// MaxTurns, else the Send fails with [ErrInvalidAnswer], which matches
// [ErrMaxTurns], with the last reason. Each answer sent back is an
// [AnswerRejected] event; a rejected call of the final tool is a [ToolEnd]
// instead. An answer given by the final tool's call ends with
// [Result].StopReason end_turn, as the kept history does. A schema that
// cannot be used fails before any model call ("converse: answer schema:
// ..."); [CheckSchema] gives that error up front.
//
// The kept history stays a valid conversation. The final call is kept as a
// text block holding the answer, and the rejected ones stay answered with
// their errors. A later Send on a conversation without tools describes the
// final tool as withdrawn. The final tool's calls get ToolStart and ToolEnd
// events and execute_tool spans like any call.
//
// A tool made with tools.Options.Strict is sent with strict: true. Bedrock
// takes only a subset of JSON Schema for a native answer's schema and a
// strict tool's. Objects are closed ("additionalProperties": false). The
// constraints it rejects are said in the description instead, as
// Anthropic's SDKs do: minimum, maximum, multipleOf, minLength, maxLength,
// and array bounds past a minItems of 1 (an int8 field's bounds, say). The
// answer or call is still validated against the whole schema.
//
// # Images and documents
//
// A tool returns images and documents beside or instead of its JSON
// output, as a tools.Result: its Output and a []tools.Media. Images are
// png, jpeg, gif or webp; documents pdf, csv, txt, md, html, doc, docx, xls
// or xlsx. Package tools stays free of Bedrock types; this package maps
// them to image and document blocks inside the call's toolResult. A
// command tool prints a media envelope instead (see package tools), and MCP
// tools' images and embedded documents come through too.
//
// Bedrock's rules are kept before the call. What a model cannot take
// becomes a text placeholder saying what was left out and why ("[application/pdf,
// 26 B: left out, not a pdf document]"), never a rejected request:
//
//   - Each medium is checked before its result enters the history. It has
//     bytes. An image is at most 3.75 MB and 8,000 px a side, and its bytes
//     are a whole png, jpeg, gif or webp image: the size is read from the
//     header, and the end checked, without decoding. A document is at most
//     4.5 MB, and its bytes start as its format's do (%PDF-, a zip archive
//     for docx and xlsx, an OLE file for doc and xls). For txt, csv, md and
//     html they are UTF-8.
//   - The model family's rules apply: Claude 3 and later take images and
//     documents, Claude 3.5 Haiku documents only, Nova images only, and the
//     other families none in a tool result.
//   - An image whose bytes are of another format than its type says (a jpeg
//     labelled image/png) is sent in the format of its bytes; image/jpg
//     and image/x-png are taken too.
//   - A message answering a turn's calls holds at most 20 images and 5
//     documents.
//   - A request, over all its messages (a SendMessage's own documents
//     too), holds at most 5 documents. For Claude it holds at most 100
//     images and documents together ("too many images and documents: 101 +
//     0 > 100"). In a request of more than 20 images, none is larger than
//     2,000 px a side ("image exceed max allowed size for many-image
//     requests: 2000 pixels"). The oldest go as placeholders in the
//     request, while the history keeps them, so the newest reach the model.
//     Past Claude's 100 they go 5 at a time, so that the requests in
//     between keep their prefix for the prompt cache.
//   - A document is named after the tool, cleaned to the allowed
//     characters, or "document N". A document extension such as .pdf is
//     dropped, and another dot made a space: "v1.2 notes" is "v1 2 notes".
//     No name is given twice in a request. A repeat, such as a second
//     "document 1", is numbered "document 2", and so is a SendMessage
//     document named as one the history holds. A name Bedrock does not take
//     there is an error before any call.
//   - A SendMessage's own images and documents are judged by their bytes as
//     a tool's are. One Bedrock would reject (empty, truncated, a jpeg
//     labelled png, a page that is no PDF) is an error before any call.
//
// [ToolEnd].Media describes the media of a call ([MediaInfo]); the limits
// of a message and of a request are applied after it. The command's -v
// trace shows it as [image/png, 12 KiB].
//
// # Request fields
//
// Options.Request is the SDK's own bedrockruntime.ConverseInput. It is the
// template of every model call: turns and summaries, Converse and
// ConverseStream alike. Set System, InferenceConfig,
// AdditionalModelRequestFields, GuardrailConfig, PerformanceConfig,
// ServiceTier, RequestMetadata, PromptVariables, OutputConfig, or a field a
// newer SDK adds, and it is sent as set. A guardrail_intervened stop ends
// the Send normally, its trace in the Result; StreamPolicy.GuardrailMode
// sets the mode for streams. The loop fills in ModelId, Messages and
// ToolConfig (from the registry, Options.ToolChoice and
// Options.SystemTools); a template that sets them fails the Send:
//
//	conv := converse.New(client, modelID, reg, func(o *converse.Options) {
//		o.Request.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "Be brief."}}
//		o.Request.InferenceConfig = &types.InferenceConfiguration{MaxTokens: aws.Int32(512)}
//	})
//
// Each [Result] and [TurnEnd] carries the last call's [Response]: Trace,
// Metrics, ServiceTier, PerformanceConfig and the additional response
// fields.
//
// # Budgets and cost
//
// Options.Budget (a [Budget]) bounds what each Send (Budget.Send) and the
// whole conversation (Budget.Conversation) spend. The [Limits] are input,
// output and total tokens, tool calls and cost in dollars; cache reads and
// writes count as input, as Bedrock bills them. Budget.WallTime bounds each
// Send. A limit is never passed. Before each model call the estimated input
// must fit in what is left. The call's maxTokens is capped (on a copy of
// the inference configuration) to what is left after it. A tool round
// starts only if all its calls fit. A limit reached ends the Send at a step
// boundary with a [*BudgetError] (errors.Is(err, ErrBudget)) naming the
// limit and the spend. Restore the State with a raised limit, and Resume
// goes on:
//
//	c := converse.New(client, modelID, reg, func(o *converse.Options) {
//		o.Budget = &converse.Budget{Send: converse.Limits{CostUSD: 0.50, ToolCalls: 40}}
//	})
//
// [Result].CostUSD is the Send's usage in dollars; it is nil when the
// model's prices are unknown. The prices are Options.Prices, or the table
// of on-demand prices of package modelinfo (Claude, Nova;
// modelinfo.PricesOf). The table's sources are in
// converse/internal/models/prices.go, figure by figure. Claude's are
// Anthropic's own list prices, which AWS's pricing page could not be read
// to confirm. Nova's, and the 10% regional premium of the newer Claude
// models, come from third-party copies of AWS's prices. For a bill, set
// Options.Prices. The invoke_agent span carries the cost as
// tooluse.converse.cost_usd.
//
// Package quota paces the model calls of many conversations by one quota
// of requests and tokens per minute, through the Client they hold.
//
// # Prompt caching and the context window
//
// Every turn of a tool loop sends the whole history again. With
// Options.Cache, each request carries cachePoint blocks: after the tools,
// the system prompt and the newest user messages. A turn then reads from
// Bedrock's prompt cache what the turn before wrote, billed at a tenth of
// the input price for Claude. Only the models and fields of Bedrock's
// prompt caching table get them: Claude 3.5 Haiku, 3.7 Sonnet, Claude 4 and
// later, and Nova on the system prompt and messages. There are at most
// four, your own included, only where the prefix reaches the model's
// minimum, and they are never kept in the history. CachePolicy.TTL asks for
// the one-hour TTL where the model takes it.
//
// [Usage] reports CacheReadInputTokens and CacheWriteInputTokens. Of the
// writes, CacheWrite1hInputTokens are those with the one-hour TTL, from
// Bedrock's cacheDetails. They cost twice the input price on Claude
// (modelinfo.Prices.CacheWrite1h), where five-minute writes cost 1.25
// times.
//
// Options.Context (a [ContextPolicy]) keeps requests inside the model's
// window. The history is trimmed before a call whose estimate passes
// MaxInputTokens, and again when Bedrock reports an overflow; the call is
// then made again, once. First the oldest large tool results are shortened
// to their head and tail (ToolResultBytes). Then the oldest exchanges are
// dropped whole (a toolUse turn with its results), optionally summarised
// by a model call (Summarize). Tokens come from the last usage, from
// Bedrock's CountTokens (CountTokens), or from an estimate. A count is a
// step's request, Step.CountTokens, which the driver makes (Send with its
// client) and hands to HandleCount; the step itself calls nothing. The trimmed
// history is kept, and a [Trimmed] event reports each trim. Without a
// policy an overflow is Bedrock's error, or [ErrContextWindowExceeded] for
// the stop reason.
//
// # Streaming
//
// Options.Stream (a [StreamPolicy]) uses ConverseStream: text deltas reach
// OnEvent as they arrive. The events are assembled into exactly the message
// Converse would have returned ([AssembleStream] does it for a stream of
// your own). Tool input JSON is concatenated from its fragments: empty
// input means {}. Input that does not parse is an error result, and the
// tool is not run. A stream that ends without messageStop, which the SDK
// does not report, is [ErrStreamTruncated], and no tool call of that turn
// runs. Exception frames come back as the SDK's typed errors.
//
// Some model families do not support tool use while streaming: Llama,
// Mistral, Writer, DeepSeek-R1, and Cohere Command without R. They fall
// back to Converse, with a [StreamFallback] event. Streamed conversations
// may share one client, as a service shares one. Each ConverseStream call
// gets an event-stream decoder of its own, since the SDK's client shares
// one between all its streams (see package bedrocktest).
//
// StreamPolicy.EarlyToolStart goes further. A call of a tool marked
// Speculative (tools.Options) starts as soon as its block is complete,
// while the model is still streaming. A turn then costs max(stream, tool)
// rather than stream + tool. If the turn does not end in tool_use, the
// early results are discarded. Mark only tools without side effects.
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
// them, with the Result of what was done. Serve answers them 200, never a
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
// converse serve runs. A limit's answer names the limit and holds the text
// and usage so far. A failure of its Store is a 500 unless a conflict. A
// limit or a stop leaves the task stopped (see the states above), so the
// session's next prompt goes to the model at once. A session a failure
// interrupted is resumed first, the answer's "resumed" reporting it. The
// command exits 2 for a usage error. A Temporal workflow that ends without
// an answer fails with a non-retryable ApplicationError of that type, as a
// retry would run its tools again. Its details hold the State to go on
// from. Its model activity's failure is retryable for OutcomeRetry alone.
//
// # Telemetry
//
// Conversations emit OpenTelemetry traces and metrics in the GenAI semantic
// conventions (https://opentelemetry.io/docs/specs/semconv/gen-ai/), with
// the names of go.opentelemetry.io/otel/semconv v1.41.0, pinned by a test.
// The package depends on the OpenTelemetry API only.
// Options.Telemetry.TracerProvider and MeterProvider default to the global
// providers. A service that set up OpenTelemetry gets spans with no code. A
// program that did not pays nothing it could measure: the spans and
// instruments are no-ops.
//
//   - Each Send (and Resume) is an invoke_agent span (INTERNAL), a child of
//     the span in its context. It carries the Send's total usage and, on
//     failure, error.type. A Resume that finds nothing to resume
//     ([ErrNothingToResume]) has no span.
//   - Each model call is a "chat {model}" span (CLIENT). It carries
//     gen_ai.operation.name, gen_ai.provider.name=aws.bedrock,
//     gen_ai.request.model and gen_ai.request.stream. It carries max
//     tokens, temperature, top-p and stop sequences when set, and
//     aws.bedrock.guardrail.id with Options.Request.GuardrailConfig. It
//     carries gen_ai.response.finish_reasons (Bedrock's stop reason), and
//     the input, output and cache token counts. The input count includes
//     the cached tokens, as the conventions ask; Bedrock's inputTokens
//     leaves them out. server.address and server.port are the endpoint the
//     SDK resolved, read from the request by a middleware. A stream adds
//     gen_ai.response.time_to_first_chunk, in seconds. The span covers the
//     SDK's retries.
//   - A failed model call sets status Error and error.type. That is the
//     Bedrock exception's code (ThrottlingException), a name of ours for
//     the loop's own errors (stream_truncated, stalled, max_turns,
//     cancelled, ...), else _OTHER. The status description is the error's text, with
//     credentials and signatures an AWS error echoes redacted (as
//     recording.Redact does). For a structured answer that does not match
//     its schema (error.type invalid_answer, or max_turns) it leaves the
//     reason out, which quotes the answer, unless content is recorded.
//   - The operation, provider and model, a tool's name and type, and the
//     ids below are set when a span starts, so that a sampler sees them. A
//     span that a panic of the caller's code (OnEvent, Client, ...) cuts
//     off is ended with error.type aborted.
//   - Each tool call is an "execute_tool {tool}" span (INTERNAL), a sibling
//     of the turn's other calls under the Send's span, early-started calls
//     too. It carries gen_ai.tool.name, gen_ai.tool.call.id,
//     gen_ai.tool.type=function and gen_ai.tool.description. Its context is
//     the tool's, so the tool's own spans nest under it.
//   - A failed call sets status Error and error.type: unknown_tool,
//     invalid_input, tool_error, panic, timeout, cancelled, output_error or
//     duplicate_id. Calls answered without running have their span too,
//     with error.type denied (by an approver), interrupted (cut off by a
//     crash, answered on Resume) or stopped (by Stop, a turn limit or a
//     budget). A Send that pauses for approval ends with error.type paused.
//   - The metrics, with the conventions' buckets, are
//     gen_ai.client.operation.duration (s), gen_ai.client.token.usage (with
//     gen_ai.token.type input and output),
//     gen_ai.client.operation.time_to_first_chunk (s) and
//     gen_ai.execute_tool.duration (s, with the tool's name and type and the
//     agent's name).
//
// Prompts, answers, tool arguments and results are recorded only with
// Telemetry.RecordContent: never by default, and redacted as recordings
// are. They are gen_ai.input.messages, gen_ai.output.messages,
// gen_ai.system_instructions, gen_ai.tool.call.arguments and
// gen_ai.tool.call.result. Telemetry.ConversationID (default Session.ID) is
// the gen_ai.conversation.id of every span, which ties a conversation's
// Sends together. Telemetry.AgentName is its gen_ai.agent.name; the Send's
// span is then "invoke_agent {name}". Package trace writes the same events
// as lines a person reads, the trace of converse -v.
//
// # Testing
//
// Offline tests of code built on this package use the bedrocktest
// subpackage, a local Bedrock Runtime that the real SDK client talks to.
package converse
