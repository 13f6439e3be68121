// Package bedrocktest provides a fake Amazon Bedrock runtime for tests, in
// the spirit of net/http/httptest. It is a real HTTP server on loopback
// that speaks Bedrock's wire protocol. Code under test talks to it through
// the real SDK client, exactly as it talks to Bedrock.
//
// # Serving
//
// NewServer starts a Server with a Handler. Server.Client returns a real
// *bedrockruntime.Client aimed at it (static credentials, region us-east-1,
// the SDK's default retryer); Server.Config returns the aws.Config behind
// it, for code that builds its own client.
//
//	srv := bedrocktest.NewServer(bedrocktest.Script(
//		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "get_weather", Input: map[string]any{"city": "Paris"}}),
//		bedrocktest.Text("It is sunny."),
//	))
//	defer srv.Close()
//	client := srv.Client()
//	// ... run the code under test with client ...
//	reqs := srv.Requests() // what the code sent, decoded
//
// NewServer takes option functions of func(*Options), the AWS SDK's
// convention, which the whole module follows. The server keeps the last
// 1000 requests for Requests; Options.MaxRequests keeps more, fewer or
// none, for long runs. Options.MaxRequestBytes makes it refuse larger
// request bodies with a ValidationException, as a test of what an oversize
// request gets (there is no limit by default: Bedrock documents none in
// bytes).
//
// Options.MaxInputTokens gives the server a context window, in tokens by
// EstimateTokens (a token per four bytes of the request's JSON, images and
// PDFs aside). The server answers a larger request as Bedrock does. It also
// answers CountTokens with that estimate. Options.Accounting reports the
// estimate in each reply's usage and simulates Bedrock's prompt cache, so
// that a test sees what cache points save. Validate, applied to every
// request, checks the prompt caching rules too.
//
// A client of your own aimed at the server (Options.BaseEndpoint set to
// URL) should send through Server.HTTPClient or recording.PlainBodies.
// They work around a trap of the SDK's transport on loopback. Without
// them, about one ConverseStream call in a hundred that follows a Converse
// call on the same client loses its connection. Client and Config have it
// already.
//
// The server answers POST /model/{modelId}/converse with a JSON body and
// POST /model/{modelId}/converse-stream with an AWS event stream, both
// encoded with the SDK's own codec. A request body that does not decode is
// a 400 ValidationException, any other path a 404 UnknownOperationException.
//
// # Handlers and replies
//
// A Handler receives each decoded Request and returns a Reply, or an *Error
// to answer with a Bedrock error. A Handler's error once the call's context
// has ended (the client gave up) is not answered: the client sees its own
// context's error. Script answers with a list of replies in
// order; Fail, Throttle and Delay wrap a Handler with failures and latency.
// Text, ToolUse and Output build replies. The same Reply answers Converse
// and ConverseStream. For a stream, the answer is cut into the events a
// real model sends: text in small deltas, tool input JSON in fragments, a
// padding member "p" in every payload. Reply's fields add faults.
// Latency pauses before the first event, and also delays a Converse
// answer. Interval pauses between events, and StallAfter stalls after some
// events. CutAfter drops the connection mid-frame. DropMessageStop leaves
// out messageStop, and Exception sends an exception frame.
//
// # Virtual time
//
// NewInProcessServer serves without a socket. Its client's transport calls
// the Server in process, and the response comes back through a pipe in the
// same wire format. In a testing/synctest bubble, a client waiting on it is
// durably blocked, so a minute's Latency passes in virtual time. A real
// socket is not durably blocking, so NewServer's loopback stays for the
// tests outside a bubble.
//
// # Errors
//
// Validation, Throttling, AccessDenied, ResourceNotFound, ModelTimeout,
// ModelNotReady, InternalServer and ServiceUnavailable build errors in
// Bedrock's form; the client returns them as the SDK's typed errors:
//
//	var te *types.ThrottlingException
//	if errors.As(err, &te) { ... }
//
// The client's retryer applies as with Bedrock. The SDK's standard retryer
// retries throttling errors and 500, 502, 503 and 504 (three attempts by
// default). It retries nothing else: not ModelNotReady (a modelled 429),
// not ModelTimeout (408), not validation or access errors. To change that, pass
// an option:
//
//	client := srv.Client(func(o *bedrockruntime.Options) {
//		o.Retryer = retry.AddWithMaxAttempts(o.Retryer, 1)
//	})
//
// # Validation
//
// Before a Handler sees a request, the server checks it against the rules
// Bedrock enforces (see Validate). It answers a violation with Bedrock's
// own ValidationException message, so that a bug that Bedrock would reject
// fails the test too. On ConverseStream, Bedrock passes on some rejections
// from the model ("The model returned the following errors: ..."). Those
// come as Bedrock sends them: after the stream's 200, in a
// validationException frame.
// Options.Lenient turns the checks off.
//
// # What the client sees of faults
//
// An exception frame ends the stream: the events before it arrive, then
// the stream's Err returns the typed error (*types.ModelStreamErrorException,
// *types.ThrottlingException, ...). A cut connection closes the Events
// channel after the last whole event, and Err returns nil. The SDK takes a
// frame cut short for the end of the stream. So a client must notice the
// missing messageStop itself.
//
// # Recording and replay
//
// Recordings are a feature of the library, in package recording. Its
// Recorder, set as a client's HTTPClient, records the calls made to
// Bedrock: no header, bodies redacted, files written 0600. Its Replayer
// serves them again in process. Replay (or ReplayT in a test)
// serves a recording from the Server instead, with the Replayer's checks.
// A recorded error comes back as its type and message only, where the
// Replayer gives its whole body. Each request is compared with the
// recorded one unless recording.ReplayOptions.Lenient is set. ReplayT also
// fails the test if recorded exchanges were left unused.
//
// # Concurrent streams on one client
//
// Run concurrent ConverseStream calls on one *bedrockruntime.Client under
// -race, and the race detector reports a data race in smithy-go's
// internal/eventstream Codec. The client's Options.Protocol, made once in
// bedrockruntime.New, holds a single event-stream codec: a decoder and a
// payload buffer, which every stream's reader goroutine uses. The race is the
// SDK's (smithy-go v1.28.9, bedrockruntime v1.63.13), and not only a
// report: streams share the buffer their events are decoded into. A
// converse.Conversation applies the workaround to its own calls; until the
// SDK is fixed, code that calls ConverseStream itself should give each
// stream a protocol of its own with a per-call option,
//
//	out, err := client.ConverseStream(ctx, in, func(o *bedrockruntime.Options) {
//		o.Protocol = restjson1.New(schemas.AmazonBedrockFrontendService)
//	})
//
// (restjson1 is github.com/aws/smithy-go/transport/http/protocol/restjson1,
// schemas is github.com/aws/aws-sdk-go-v2/service/bedrockruntime/schemas),
// or use one client per goroutine. The test TestConcurrentStreamsOneClient,
// behind the build tag racerepro, reproduces it:
//
//	go test -race -tags racerepro -run TestConcurrentStreamsOneClient ./converse/bedrocktest/
package bedrocktest
