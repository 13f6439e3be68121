// Package bedrocktest provides a fake Amazon Bedrock runtime for tests, in
// the spirit of net/http/httptest: a real HTTP server on loopback that
// speaks Bedrock's wire protocol, so that code under test talks to it
// through the real SDK client, exactly as it talks to Bedrock.
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
// The server answers POST /model/{modelId}/converse with a JSON body and
// POST /model/{modelId}/converse-stream with an AWS event stream, both
// encoded with the SDK's own codec. A request body that does not decode is
// a 400 ValidationException, any other path a 404 UnknownOperationException.
//
// # Handlers and replies
//
// A Handler receives each decoded Request and returns a Reply, or an *Error
// to answer with a Bedrock error. Script answers with a list of replies in
// order; Fail, Throttle and Delay wrap a Handler with failures and latency.
// Text, ToolUse and Output build replies. The same Reply answers Converse and
// ConverseStream: for a stream, the answer is cut into the events a real
// model sends (text in small deltas, tool input JSON in fragments, a padding
// member "p" in every payload), and Reply's stream fields add faults: a
// pause between events (Interval), a connection dropped mid-frame
// (CutAfter), a missing messageStop (DropMessageStop) or an exception frame
// (Exception).
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
// The client's retryer applies as with Bedrock: throttling, 500 and 503 are
// retried (three attempts by default). To change that, pass an option:
//
//	client := srv.Client(func(o *bedrockruntime.Options) {
//		o.Retryer = retry.AddWithMaxAttempts(o.Retryer, 1)
//	})
//
// # Validation
//
// Before a Handler sees a request, the server checks it against the rules
// Bedrock enforces (see Validate) and answers a violation with Bedrock's own
// ValidationException message, so that a bug that Bedrock would reject
// fails the test too. WithLenient turns the checks off.
//
// # What the client sees of faults
//
// An exception frame ends the stream: the events before it arrive, then
// the stream's Err returns the typed error (*types.ModelStreamErrorException,
// *types.ThrottlingException, ...). A cut connection closes the Events
// channel after the last whole event and Err returns nil: the SDK takes a
// frame cut short for the end of the stream, so a client must notice the
// missing messageStop itself.
package bedrocktest
