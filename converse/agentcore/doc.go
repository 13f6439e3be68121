// Package agentcore serves conversations over the HTTP protocol contract of
// Amazon Bedrock AgentCore Runtime, so that a Go agent built on package
// converse runs in the runtime's container as it is.
//
// The AgentCore developer guide states the contract in two pages:
// "Understand the AgentCore Runtime service contract"
// (https://docs.aws.amazon.com/bedrock-agentcore/latest/devguide/runtime-service-contract.html)
// and "HTTP protocol contract"
// (https://docs.aws.amazon.com/bedrock-agentcore/latest/devguide/runtime-http-protocol-contract.html).
// The container is an ARM64 image listening on 0.0.0.0, port 8080. POST
// /invocations takes a JSON body such as {"prompt": "What's the weather
// today?"}. It answers JSON ({"response": ..., "status": "success"}) or,
// for a stream, server-sent events. GET /ping answers {"status":
// "Healthy"} or {"status": "HealthyBusy"}, with time_of_last_update: the
// Unix time in seconds of the last change of the status, as the runtime's
// own Python SDK (bedrock-agentcore) sends it. HealthyBusy keeps the
// session's microVM alive while work runs. The header
// X-Amzn-Bedrock-AgentCore-Runtime-Session-Id names the session.
//
// A [Handler] does that for the conversations of one model and registry:
//
//	h := agentcore.New(client, modelID, reg)
//	log.Fatal(http.ListenAndServe("0.0.0.0:8080", h)) // in the runtime's container
//
// A Handler bounds the time to read an invocation's body
// ([Options].BodyTimeout, with the ResponseWriter's read deadline); give
// its http.Server the rest of the bounds on slow and idle callers:
//
//	srv := &http.Server{Addr: "0.0.0.0:8080", Handler: h,
//		ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
//		MaxHeaderBytes: 128 << 10}
//
// A Handler authenticates no caller: whoever reaches it can invoke the
// model and the tools. AgentCore Runtime authenticates the callers in front
// of the container (IAM SigV4 or a JWT authorizer), which is why it can
// listen on every interface there; elsewhere, listen on loopback or behind
// a proxy that authenticates.
//
// # Invocations
//
// The body of POST /invocations is a JSON object:
//
//	{"prompt": "What is 2 + 2?"}
//	{"decisions": [{"toolUseId": "t1", "verdict": "approved"},
//	               {"toolUseId": "t2", "verdict": "denied", "reason": "not today"}]}
//
// with, optionally, "stream": true. Other fields (a caller's own metadata,
// say) are ignored, and named in a Debug record of Options.Logger. The body
// is read as JSON with a Content-Type of application/json,
// application/octet-stream or text/plain, or with none. The AWS SDK for
// Go's InvokeAgentRuntime sends application/octet-stream for an input
// without a ContentType, and the runtime passes it on. Any other type is
// refused with 415 Unsupported Media Type, as a body the Handler does not
// read. It may
// be up to [Options].MaxBody bytes long (DefaultMaxBody, 1 MiB; the runtime
// takes up to 100 MB); a longer one is refused with 413 Request Entity Too
// Large, read no further. The body is decoded as it is read, never held
// twice. At most Options.MaxConcurrent invocations run at once, their
// bodies' reading included: one more is refused with 503 and Retry-After.
//
// A prompt is sent to the session's conversation; decisions resume a
// conversation paused for approval. The session is the header's: a plain
// name of letters, digits, '.', '_' and '-', up to 256 bytes, as the
// runtime's go. The Store keeps a session whose id is longer than 200 bytes
// under "sha256-" and the id's SHA-256 in hex, for a file name to fit. An
// invocation without the header starts a new session, whose id the answer
// carries, in the header and as "sessionId". The conversation is loaded from
// [Options].Store at the start of each invocation and saved there at every
// step (converse.Options.Session), so a session goes on across invocations
// and across restarts of the server.
//
// The JSON answer is
//
//	{"status": "success", "response": "4", "sessionId": "...",
//	 "stopReason": "end_turn", "turns": 1, "usage": {...}, "costUSD": 0.0001}
//
// with "costUSD" the cost of its model calls at the model's on-demand prices
// (converse.Result.CostUSD), absent when they are unknown,
//
// or, for a conversation that pauses because calls need approval (tools
// made with tools.Options.RequireApproval, with no Approver in
// Options.Conversation),
//
//	{"status": "paused", "sessionId": "...",
//	 "pending": [{"toolUseId": "t1", "name": "send", "input": {...}}]}
//
// after which the next invocation of the session carries one decision per
// pending call (a prompt is refused with 409 until then):
// {"decisions": [{"toolUseId": "t1", "verdict": "approved"}]}, or "denied"
// with a "reason". A call whose tool asks the user a question (an MCP
// server's elicitation) is pending with it, untrusted text:
//
//	"pending": [{"toolUseId": "t2", "name": "ops__deploy", "input": {},
//	             "question": {"message": "Deploy where?", "schema": {...}, "retry": {...}}}]
//
// and is answered with "verdict" "accepted" and an "answer" object that
// fits the schema (one that does not is refused with 400, and nothing is
// sent to the tool), or "declined" or "cancelled". A paused answer
// also holds the text, turns and usage of its Send, as do these:
//
//	{"status": "limit", "limit": "turns", "message": "...", "response": "...",
//	 "stopReason": "tool_use", "turns": 10, "usage": {...}, "sessionId": "..."}
//	{"status": "stopped", "message": "...", "response": "...", ...}
//
// "limit" is the answer of a conversation that reached a limit:
// converse.Options.MaxTurns ("limit": "turns") or a converse.Budget (the
// BudgetError's Limit, such as "cost"); "stopped" that of one its caller
// stopped (converse.ErrStopped, or its context ended). Neither is a
// failure: the next invocation of the session goes on from there (though
// a limit of Budget.Conversation stays reached).
//
// A prompt for a session that a failure, a limit or a caller gone away left
// interrupted first resumes it (converse.Conversation.Resume). The answer's
// "resumed" then holds that Resume's "status", "response", "stopReason",
// "turns" and "usage". The prompt is sent only if its status is "success";
// otherwise the answer is the Resume's.
//
// # Streams
//
// A caller asks for a stream with "stream": true in the body or with the
// header Accept: text/event-stream (the runtime does not forward Accept to
// the container, hence the field). The answer is then text/event-stream:
// one data line of JSON per event. An event's "type" is "text" (a delta of
// the model's text), "toolStart", "toolEnd" (the call's output or error)
// or "turnEnd" (the stop reason and the turn's usage). The last event is
// "result" (the JSON answer above), or else one of the type of its status:
// "limit", "paused", "stopped" or "error". A stream makes the model calls
// with ConverseStream.
//
// # Errors
//
// Every answer has a "status". Its HTTP status follows the outcome of the
// invocation (converse.Classify), as the table of package converse's doc
// (section Outcomes) says:
//
//   - 200 for an answer, a limit, a pause or a stop.
//   - 503, with Retry-After, for a failure worth trying again: throttling,
//     a 5xx of Bedrock's, a broken stream or connection, or a server
//     stopping (see Shutdown).
//   - 409 Conflict for a session running another invocation (they are
//     never interleaved), changed elsewhere, or in a state that refuses
//     the invocation.
//   - 400 for a body that is not such an object, decisions that do not fit
//     the pending calls, or another request that fails until it changes.
//   - 502 for such a failure of Bedrock's, an AWS API error of a model
//     call (ValidationException, AccessDeniedException, ...).
//   - 500 for the rest. The Store's failures are among them, even an AWS
//     API error (of DynamoDB or S3, for a dynamostore.Store).
//
// An error answer is {"status": "error", "error": "...", "errorType":
// "..."}, with "errorType" Bedrock's error code, for a Bedrock failure
// only. The "error" of a 500 says only whether the Store failed: the
// error's own words, which may hold the server's paths, go to the log
// (see Logs). Once a stream has started, a failure is its last event, of type
// "error".
//
// A caller that goes away cancels its invocation: the conversation's
// context ends, and it keeps what it completed up to its last step; the
// next invocation of the session goes on from there.
//
// # Shutdown
//
// A server shutting down stops taking connections and lets the running
// invocations finish for a grace period (http.Server's Shutdown with a
// deadline). Then it calls [Handler.Stop]. The invocations still running
// are cancelled and answer 503 with Retry-After, and an "error" saying that
// the server is stopping. Those that come after it are refused alike. A
// conversation cut off so keeps what it completed up to its last step; the
// next invocation of the session resumes it. A second Shutdown waits for
// the answers:
//
//	grace, cancel := context.WithTimeout(context.Background(), 30*time.Second)
//	defer cancel()
//	if srv.Shutdown(grace) != nil {
//		h.Stop()
//		srv.Shutdown(context.Background())
//	}
//
// # Logs
//
// Each invocation is one record of [Options].Logger (slog.Default() if
// nil), "agentcore: invocation". Its level is Info for a 2xx answer, Warn
// for a 4xx and Error for a 5xx. Its attributes are session, code (the
// HTTP status), status (the answer's), duration, turns, inputTokens,
// outputTokens and costUSD (when known). An invocation that did not end
// with an answer adds errorClass and error. errorClass is a
// converse.Outcome, or "request" for a request refused before its
// conversation ran. The session and the error pass through
// trace.Printable, as a caller sent the one and may have sent part of the
// other. No header and no credential is logged.
//
// # Health
//
// GET /ping never waits on a conversation: it reads a count of running
// invocations and the time it last changed, under a lock held for no
// longer than that.
package agentcore
