// Package recording records the Converse and ConverseStream calls of a
// bedrockruntime client and plays them back, without a network. It holds
// the recording format, the Recorder that writes it, and the Replayer that
// serves it again. Redact keeps credentials out of everything recorded.
//
// Both the Recorder and the Replayer are aws.HTTPClient values, so they go
// where the SDK takes one, bedrockruntime.Options.HTTPClient:
//
//	rec := recording.NewRecorder(nil)
//	client := bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
//		o.HTTPClient = rec
//	})
//	// ... talk to Bedrock ...
//	err := rec.Save("testdata/chat.json")
//
// and later, offline:
//
//	r, err := recording.Load("testdata/chat.json")
//	replay := recording.NewReplayer(r)
//	client := replay.Client()
//	// ... the same conversation ...
//	err = replay.Unused() // nil once every recorded call was asked for
//
// Replayer.Client needs no AWS configuration or credentials, and never
// looks for them, so a replay runs in CI as it runs on a laptop. (A client
// of a config.LoadDefaultConfig, with the Replayer as its HTTPClient, would
// search for credentials, asking the EC2 metadata service when it finds
// none; and aws.AnonymousCredentials alone makes the SDK's client panic.)
//
// The package bedrocktest serves a recording from its loopback server too
// (bedrocktest.Replay), with the same checks.
//
// Options follow the AWS SDK's convention, used across this module: an
// exported Options struct (ReplayOptions) and functions of
// func(*ReplayOptions) that change it.
//
// # Format
//
// A recording is one JSON object, written indented with a newline at the end:
//
//	{
//	  "version": 2,
//	  "exchanges": [
//	    {
//	      "operation": "Converse",
//	      "modelId": "anthropic.claude-3-5-haiku-20241022-v1:0",
//	      "request": {"messages": [...], "toolConfig": {...}},
//	      "status": 200,
//	      "response": {"output": {"message": {...}}, "stopReason": "tool_use", ...}
//	    },
//	    {
//	      "operation": "ConverseStream",
//	      "modelId": "anthropic.claude-3-5-haiku-20241022-v1:0",
//	      "request": {"messages": [...]},
//	      "status": 200,
//	      "events": [
//	        {"type": "messageStart", "payload": {"role": "assistant"}},
//	        {"type": "contentBlockDelta", "payload": {"contentBlockIndex": 0, "delta": {"text": "Hi"}}},
//	        ...
//	      ]
//	    },
//	    {
//	      "operation": "Converse",
//	      "modelId": "anthropic.claude-3-5-haiku-20241022-v1:0",
//	      "request": {"messages": [...]},
//	      "status": 429,
//	      "errorType": "ThrottlingException",
//	      "response": {"message": "Too many requests, please wait before trying again."}
//	    }
//	  ]
//	}
//
// "version" is Version, 2; Load reads version 1 too, which is version 2
// without "messageType" and "decodeError" (a recording of version 1 is
// saved as version 1 again), and rejects any other version.
// "exchanges" lists the model calls in the order they were made, one entry
// per HTTP attempt (an SDK retry is an exchange of its own). Each exchange has:
//
//   - "operation": "Converse" or "ConverseStream".
//   - "modelId": the model ID or ARN from the request path, path-unescaped.
//   - "request": the request body, a JSON object, as the client sent it
//     (or a JSON string holding its text if it was not JSON).
//   - "status": the HTTP status of the response.
//   - "errorType": for an error response (status 300 or more), the error
//     type from the X-Amzn-ErrorType header without what follows ':' (for
//     example "ValidationException"); absent otherwise.
//   - "response": the response body of a successful Converse call, or the
//     body of an error response of either operation. A successful
//     Converse body is a JSON object, or a JSON string holding its text if
//     it was not JSON, served again as that text. An error body is usually
//     {"message": "..."}, with whatever other members the error has; it is
//     served again as it is, or as its text. "response" is absent for a
//     successful ConverseStream call.
//   - "events": for a successful ConverseStream call, the event-stream
//     messages in the order they arrived, each as {"type", "payload"}: "type"
//     is the :event-type header and "payload" the JSON payload. An exception
//     message (":message-type" "exception") is recorded with "messageType":
//     "exception". Its type is the :exception-type header (for example
//     "modelStreamErrorException"), its payload the exception's body. An
//     error message (":message-type" "error") is recorded with
//     "messageType": "error". Its type is the :error-code header, its
//     payload {"message": :error-message} (null without that header). Such a
//     message ends the stream, so it can only be the last event. Without
//     "messageType", as in version 1, a type ending in "Exception" marks an
//     exception and any other an event. A payload of null means the message
//     had none. A stream that the client closed before its end holds only
//     the events read until then.
//   - "decodeError": for a ConverseStream call whose response stopped being
//     an event stream (a message whose checksum does not match, bytes that
//     are no event-stream message), what the decoder said; "events" holds
//     the messages before, if any. A replay ends the stream there with a
//     message the client cannot decode, so that the call fails again.
//
// Bodies and payloads are embedded as JSON values, so the file is readable
// and diffs well. Whitespace between JSON tokens is not kept (the whole file
// is indented); every other byte is: key order, number spelling, string
// escapes. A body that is not JSON (a proxy's HTML error page, say) is kept
// as a JSON string holding its text.
//
// # Guarantees
//
// No header of the request or the response is recorded, apart from the
// error type. The Recorder passes every body and payload through Redact, as
// an AWS error body may echo the signed request. So a recording holds no
// credentials, session tokens, signatures or request IDs, and can be
// committed. Save writes it with mode 0600 all the same, through a
// temporary file, so a failed Save leaves the old file whole. A request
// recorded redacted still replays: the Replayer redacts the request it
// receives before comparing it with the recorded one.
//
// Load rejects a file that breaks the format:
//
//   - unknown fields or operations
//   - a missing model ID, request body or status
//   - a successful Converse exchange without a response object
//   - a successful stream without events or decodeError
//   - events or a decodeError on an error response
//   - an exception or error message that is not the last event
//   - the fields of version 2 in a file of version 1
package recording
