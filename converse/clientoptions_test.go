package converse_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// doFunc is an aws.HTTPClient of a function.
type doFunc func(*http.Request) (*http.Response, error)

func (f doFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// TestClientOptions: a client set up with ClientOptions hands its HTTP client
// request bodies without io.WriterTo. A transport copying through io.WriterTo
// would still be copying when the SDK closes the body (streams then die with
// "use of closed network connection"). Without ClientOptions, the SDK's bodies
// have it.
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
			_, err := converse.New(client, claude, nil).Send(context.Background(), "hi")
			require.ErrorIs(t, err, errSent)
			assert.Equal(t, tc.writerTo, writerTo)
		})
	}
}

// A client for conversations is made with ClientOptions, here aimed at
// bedrocktest (bedrockruntime.NewFromConfig(cfg, converse.ClientOptions)
// against Bedrock).
func ExampleClientOptions() {
	srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("Hello from a stream.")))
	defer srv.Close()
	client := bedrockruntime.NewFromConfig(srv.Config(), converse.ClientOptions)
	res, err := converse.New(client, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", nil,
		func(o *converse.Options) { o.Stream = &converse.StreamPolicy{} }).Send(context.Background(), "Hi.")

	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text)
	// Output: Hello from a stream.
}
