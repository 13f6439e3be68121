// Package mcptools offers the tools of Model Context Protocol servers as
// [tools.Tool] values, for a [tools.Registry] and the converse loop, using
// the official MCP Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// [Connect] starts or reaches each [Server] (a command over stdio, a URL
// over streamable HTTP, or any SDK transport), lists its tools through every
// page and adds them to a Registry:
//
//	reg := new(tools.Registry)
//	bridge, err := mcptools.Connect(ctx, reg, mcptools.Server{
//		Name:    "files",
//		Command: []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"},
//	})
//	if err != nil {
//		return err
//	}
//	defer bridge.Close()
//
// # Names
//
// A tool is offered as <server>__<tool>, cleaned to what Bedrock accepts
// (^[a-zA-Z0-9_-]{1,64}$: other characters become "_", long names are cut).
// A name that is taken (by a tool of the registry or of another server) gets
// a suffix, _2, _3, ...; a tool whose input schema our meta-schema check
// rejects is not offered. [Bridge.Warnings] reports both.
//
// # Calls
//
// Every call is bounded: by the server's Timeout (also the tool's
// Timeout, which the executor applies), and by Concurrency calls in flight
// per server, beyond which calls wait for a slot. When a call's context ends
// the SDK sends notifications/cancelled and returns at once, so a server that
// ignores the cancellation holds up neither the call nor the conversation.
//
// Failures are error results the model reads, and Go errors for callers of
// [tools.Tool.Call]:
//
//   - A result with isError wraps [ErrToolFailed], as does an error the
//     server answers with (an unknown tool, say).
//   - A server that cannot be reached, could not start or died during the
//     call wraps [ErrUnavailable].
//   - A tool the server no longer offers wraps [ErrNotOffered].
//   - The end of the call's context wraps its error.
//
// A failure on the wire says what happened. A server process exited before
// it answered (and its exit status), or its answer is not JSON-RPC. It
// answered an HTTP status ("it answered HTTP 500 Internal Server Error"),
// or a connection was cut during the call.
//
// A server over HTTP that wants authentication gets it from Server.Headers
// (a bearer token: "Authorization": "Bearer ..."). Or it gets it from a
// [SigV4] transport in Server.HTTPClient. SigV4 signs every request, each
// retry too, with AWS Signature Version 4, as an Amazon Bedrock AgentCore
// Gateway with IAM authorization wants. A server that refuses them fails
// with its status ("it answered HTTP 403 Forbidden"), naming the server.
//
// Requests, and so the headers and signatures, go to the origin (scheme,
// host and port) of Server.URL only. Streamable HTTP needs no redirects, so
// a server that answers one fails: "it redirected to
// https://other.example.com: refused; streamable HTTP needs no redirects".
// Nothing is sent where it points, whatever the CheckRedirect of
// Server.HTTPClient.
//
// A server behind OAuth 2.1, as the MCP authorization specification has
// it, gets its tokens from Server.OAuth, an OAuth handler of the SDK. One
// is its auth.AuthorizationCodeHandler. It does PKCE, discovers the
// protected resource's metadata and its authorization server's, and uses
// dynamic client registration or a client ID metadata document. Another
// is extauth's client credentials handler. Every request carries the handler's current
// access token; a 401 asks the handler once for a new one, and the request
// is sent once more. An authorization that fails fails the request, saying
// why ("its authorization failed (...)"). The tokens, like the headers, go
// to the server's origin only. Package mcpauthtest runs a server behind an
// authorization server on loopback, for tests.
//
// The body of each HTTP response is bounded by the server's MaxResponse (8 MiB
// unless set). A longer result fails its call, wrapping [ErrToolFailed], as
// soon as the limit is passed, before it is decoded or held in memory.
//
// A server may ask the user a question in the middle of a call (MCP's
// elicitation, in form mode). The call then returns a
// *tools.InputRequiredError holding the question, untrusted text, which a
// converse.Conversation turns into a pause (see converse.Call.Accept). The
// call made again with the answer (tools.WithAnswer) goes on. A question
// of an input-required result (the 2026-07-28 protocol) is answered in
// the call's retry, with the request state the server gave. One of an
// elicitation/create request (earlier protocols, or a stateful HTTP
// session) is refused, which fails the call at the server. The call made
// again then answers the request made again, and the server's tool runs
// again up to its question. Such a request is refused for good while two
// calls of its server are in flight, as it does not say which call asks.
// Several questions at once, a URL to visit, and sampling or roots
// requests fail the call, wrapping [ErrToolFailed].
//
// Server.Progress receives what a server reports of a call's progress
// (MCP's progress utility); the converse command shows it on its status
// line.
//
// A server that dies is reconnected on the next call that needs it (a
// command is started again, a URL gets a new session). A reconnection that
// fails is retried with back-off, from one second up to a minute: calls in
// between fail at once, saying when the next attempt is.
//
// # Trace context
//
// The listing of the tools and each call carry, in their _meta, the W3C
// trace context (traceparent, and tracestate if there is one) of the span
// of their context, if it has one. The server's spans then join the
// caller's trace.
//
// # Results
//
// Text content stays text. A structuredContent (a JSON object, or since the
// 2026-07-28 protocol any JSON value) is the output instead of the text
// (which, by the protocol, repeats it). Images (PNG, JPEG, GIF, WebP) go as
// [tools.Media] in a [tools.Result]. So do embedded resources whose blob
// has a document media type (PDF, CSV, HTML, plain text, Markdown, Word,
// Excel). An embedded text resource is text. Any other content (audio, a
// resource link, another image type) is a placeholder such as
// "[audio/wav content left out]". The executor's output limit applies to
// the whole.
//
// # Changes of the tool list
//
// A Registry only grows, so the bridge owns its tool set and each Tool it
// made dispatches by name at call time. When a server sends
// notifications/tools/list_changed, the bridge lists its tools again. New
// tools are added to the Registry. Tools that disappeared stay in it but
// answer that they are no longer offered, and come back if the server
// offers them again. A tool that stays keeps its name. A tool's input schema is
// the one it was first listed with; the server checks its own. [Bridge.Tools]
// gives the tools offered now.
//
// # Annotations
//
// [Bridge.Annotations] gives a tool's hints (read-only, destructive, ...) with
// the protocol's defaults applied, for an approval policy;
// [Server].ApprovalPolicy marks tools as needing approval
// ([tools.Options].RequireApproval) when they are listed. As the MCP
// specification asks, the hints are believed only from a server set as trusted
// ([Server].TrustAnnotations). Any other server's tools get the most cautious
// hints. So a server calling its deleting tool read-only does not get it run
// unasked.
//
// # Processes
//
// A command server runs without a shell, its argv as given, with the
// minimal environment of a [tools.Command] program ([tools.MinimalEnv]) plus
// its Env and InheritEnv. On Unix it runs in a process group of its own, so
// the terminal's Ctrl-C reaches the program using the bridge and not the
// servers. [Bridge.Close] stops every server process (closing its standard
// input, then SIGTERM, then SIGKILL, two seconds apart) and reaps it, then
// kills whatever is left in its process group (the node that npx started,
// say). So do a server's death, before it is restarted, and a start that
// failed or timed out. On Linux the server process is killed (SIGKILL) when
// the process using the bridge dies, even if it is killed with SIGKILL and
// cannot close the bridge; the server's own children are not. Elsewhere a
// server outlives a process killed that way.
package mcptools
