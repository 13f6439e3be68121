package lambdatool_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
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
		HTTPClient:   plainBodies{awshttp.NewBuildableClient()},
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		}),
	})
}

// plainBodies sends requests with next, their bodies reduced to Read and
// Close, as recording.PlainBodies does for Bedrock's clients: on loopback
// the SDK can close a request body while the transport still copies it
// through io.WriterTo, and the dropped connection makes the SDK send the
// Invoke a second time (about one run of TestLambdaAnswers in a hundred).
type plainBodies struct{ next aws.HTTPClient }

func (c plainBodies) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		r = r.Clone(r.Context())
		r.Body = struct{ io.ReadCloser }{r.Body}
	}
	return c.next.Do(r)
}

// traceparent is the trace context the tests' TraceContext propagates.
const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func propagate(_ context.Context, carrier map[string]string) {
	carrier["traceparent"] = traceparent
}
