// Package agentcore serves conversations over the HTTP protocol contract of
// Amazon Bedrock AgentCore Runtime, so that a Go agent built on package
// converse runs in the runtime's container as it is.
//
// The contract, as the AgentCore developer guide states it (the pages
// "Understand the AgentCore Runtime service contract",
// https://docs.aws.amazon.com/bedrock-agentcore/latest/devguide/runtime-service-contract.html,
// and "HTTP protocol contract",
// https://docs.aws.amazon.com/bedrock-agentcore/latest/devguide/runtime-http-protocol-contract.html):
// the container listens on 0.0.0.0, port 8080, and is an ARM64 image;
// POST /invocations takes a JSON body such as {"prompt": "What's the
// weather today?"} and answers JSON ({"response": ..., "status":
// "success"}) or, for a stream, server-sent events; GET /ping answers
// {"status": "Healthy"} or {"status": "HealthyBusy"} with
// time_of_last_update, the Unix time in seconds of the last change of the
// status (as the runtime's own Python SDK, bedrock-agentcore, sends it),
// and HealthyBusy keeps the session's microVM alive while work runs. The
// header X-Amzn-Bedrock-AgentCore-Runtime-Session-Id names the session.
//
// A [Handler] does that for the conversations of one model and registry:
//
//	h := agentcore.New(client, modelID, reg)
//	log.Fatal(http.ListenAndServe(":8080", h))
//
// # Invocations
//
// The body of POST /invocations is a JSON object:
//
//	{"prompt": "What is 2 + 2?"}
//	{"decisions": [{"toolUseId": "t1", "verdict": "approved"},
//	               {"toolUseId": "t2", "verdict": "denied", "reason": "not today"}]}
//
// with, optionally, "stream": true. It is read as JSON with a Content-Type
// of application/json, application/octet-stream (which the AWS SDK for
// Go's InvokeAgentRuntime sends for an input without a ContentType, and the
// runtime passes on) or text/plain, or with none; any other is refused with
// 415 Unsupported Media Type, as a body the Handler does not read. It may
// be up to 100 MiB long, as InvokeAgentRuntime takes a payload of up to
// 100 MB; a longer one is refused with 413 Request Entity Too Large.
//
// A prompt is sent to the session's conversation; decisions resume a
// conversation paused for approval. The session is the header's (a plain
// name of letters, digits, '.', '_' and '-', up to 256 bytes); an
// invocation without it starts a new session, whose id the answer carries,
// in the header and as "sessionId". The conversation is loaded from
// [Options].Store at the start of each invocation and saved there at every
// step (converse.Options.Session), so a session goes on across invocations
// and across restarts of the server.
//
// The JSON answer is
//
//	{"status": "success", "response": "4", "sessionId": "...",
//	 "stopReason": "end_turn", "turns": 1, "usage": {...}}
//
// or, for a conversation that pauses because calls need approval (tools
// made with tools.Options.RequireApproval, with no Approver in
// Options.Conversation),
//
//	{"status": "paused", "sessionId": "...",
//	 "pending": [{"toolUseId": "t1", "name": "send", "input": {...}}]}
//
// after which the next invocation of the session carries one decision per
// pending call (a prompt is refused with 409 until then).
//
// # Streams
//
// A caller asks for a stream with "stream": true in the body or with the
// header Accept: text/event-stream (the runtime does not forward Accept to
// the container, hence the field). The answer is then text/event-stream:
// one data line of JSON per event, with a "type" of "text" (a delta of
// the model's text), "toolStart", "toolEnd" (the call's output or error),
// "turnEnd" (the stop reason and the turn's usage), and last "result" (the
// JSON answer above), "paused" or "error". A stream makes the model calls
// with ConverseStream.
//
// # Errors
//
// A body that is not such an object is a 400 with a message saying what is
// wrong, as are decisions that do not fit the pending calls. An invocation
// for a session already running one is refused with 409 Conflict, never
// interleaved. A Bedrock failure, an AWS API error of a model call, is a
// 502 whose "errorType" is Bedrock's (ThrottlingException,
// ValidationException, ...); other failures are a 500, those of the Store
// among them, even an AWS API error (of DynamoDB or S3, for a
// dynamostore.Store), which has no "errorType". Once a stream has started,
// a failure is its last event, of type "error". Every error answer is
// {"status": "error", "error": "...", "errorType": "..."}, "errorType" only
// for a Bedrock failure.
//
// A caller that goes away cancels its invocation: the conversation's
// context ends, and it keeps what it completed up to its last step; the
// next invocation of the session goes on from there.
//
// # Health
//
// GET /ping never waits on a conversation: it reads a count of running
// invocations and the time it last changed, under a lock held for no
// longer than that.
package agentcore
