package recording

import (
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/tooluse/bedrock/converse/internal/httpbody"
	"github.com/tooluse/bedrock/converse/internal/redact"
)

// Redact returns s with AWS credentials and signatures replaced by
// "[REDACTED]". It replaces access key IDs (AKIA..., ASIA...). It replaces
// secret access keys and session tokens after names such as
// aws_secret_access_key, SecretAccessKey, X-Amz-Security-Token,
// aws_session_token or SessionToken. It replaces STS session tokens on
// their own too. It replaces SigV4 signatures and credentials (Signature=,
// X-Amz-Signature=, Credential=) and the value of an Authorization header.
// Names and punctuation are kept, so redacted JSON is still JSON. The
// Recorder redacts every body and payload it records with it. Use it on
// anything else that may hold an AWS error body, such as a log line.
func Redact(s string) string {
	return redact.String(s)
}

// PlainBodies returns an HTTP client that sends requests with next (nil
// means the SDK's default, awshttp.NewBuildableClient) and hides io.WriterTo
// on request bodies. The SDK closes a request body as soon as the response
// starts. A transport still copying that body through WriterTo on a fast
// connection then drops it ("use of closed network connection"). On
// loopback, about one ConverseStream call in a hundred that follows a
// Converse call on the same client fails that way. NewRecorder applies it;
// use it for a client of a local endpoint that does not record.
func PlainBodies(next aws.HTTPClient) aws.HTTPClient {
	return httpbody.Client(next)
}
