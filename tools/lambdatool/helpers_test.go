package lambdatool_test

import (
	"context"
	"encoding/json"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/tooluse/bedrock/converse/recording"
)

// modeSchema is the input schema of the test handler.
var modeSchema = json.RawMessage(`{"type": "object",
	"properties": {"mode": {"type": "string"}, "text": {"type": "string"}, "n": {"type": "integer"}},
	"required": ["mode"]}`)

// newClient is a real Lambda client aimed at url, with the SDK's standard
// retryer (three attempts) without its waits between attempts.
func newClient(url string) *lambda.Client {
	return lambda.New(lambda.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDLAMBDATOOL", "test-secret", ""),
		BaseEndpoint: aws.String(url),
		// Request bodies with Read and Close only: on loopback the SDK can
		// close a body the transport still copies, and the dropped
		// connection makes it send the Invoke a second time.
		HTTPClient: recording.PlainBodies(nil),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		}),
	})
}

// traceparent is the trace context the tests' TraceContext propagates.
const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func propagate(_ context.Context, carrier map[string]string) {
	carrier["traceparent"] = traceparent
}
