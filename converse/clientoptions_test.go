package converse_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
)

// doFunc is an aws.HTTPClient of a function.
type doFunc func(*http.Request) (*http.Response, error)

func (f doFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// TestClientOptions: a client set up with ClientOptions hands its HTTP
// client request bodies without io.WriterTo, which a transport would still
// be copying when the SDK closes the body (streams then die with "use of
// closed network connection"); without it, the SDK's bodies have it.
func TestClientOptions(t *testing.T) {
	errSent := errors.New("sent")
	for _, tc := range []struct {
		name     string
		opts     []func(*bedrockruntime.Options)
		writerTo bool
	}{
		{"bare", nil, true},
		{"with ClientOptions", []func(*bedrockruntime.Options){converse.ClientOptions}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var writerTo bool
			capture := doFunc(func(r *http.Request) (*http.Response, error) {
				_, writerTo = r.Body.(io.WriterTo)
				return nil, errSent
			})
			cfg := aws.Config{Region: "us-east-1", HTTPClient: capture, Retryer: func() aws.Retryer { return aws.NopRetryer{} },
				Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}
			client := bedrockruntime.NewFromConfig(cfg, tc.opts...)
			_, err := converse.Run(context.Background(), client, claude, nil, "hi")
			require.ErrorIs(t, err, errSent)
			assert.Equal(t, tc.writerTo, writerTo)
		})
	}
}
