package bedrocktest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/internal/inmemory"
)

// untilCancelled is a Handler that says it started, then waits for the end
// of the call's context and returns its error, as a Handler that honours
// cancellation does.
func untilCancelled(started chan<- struct{}) bedrocktest.Handler {
	return bedrocktest.HandlerFunc(func(ctx context.Context, _ *bedrocktest.Request) (*bedrocktest.Reply, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
}

// TestCancelledCallGetsItsContextError: a client that cancels a call
// whose Handler is waiting gets its own context's error. It does not get
// a ValidationException the server made of the Handler's. This holds over
// loopback and over a transport calling ServeHTTP, whose request's
// context is the client's.
func TestCancelledCallGetsItsContextError(t *testing.T) {
	started := make(chan struct{})
	srv := bedrocktest.NewServer(untilCancelled(started))
	defer srv.Close()
	for name, client := range map[string]*bedrockruntime.Client{"loopback": srv.Client(), "in memory": inmemory.Client(srv)} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-started; cancel() }()
			_, err := client.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String("anthropic.claude-3-haiku-20240307-v1:0"),
				Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "hi"}}}}})
			require.ErrorIs(t, err, context.Canceled)
			var ve *types.ValidationException
			assert.NotErrorAs(t, err, &ve)
		})
	}
}

// TestServerDoesNotAnswerACancelledCall: the server writes no error of its
// own for a call whose context ended while its Handler ran.
func TestServerDoesNotAnswerACancelledCall(t *testing.T) {
	started := make(chan struct{}, 1)
	srv := bedrocktest.NewServer(untilCancelled(started))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/model/anthropic.claude-3-haiku-20240307-v1:0/converse",
		strings.NewReader(`{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`))
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	require.Len(t, started, 1, "the Handler ran")
	assert.NotEqual(t, http.StatusBadRequest, rec.Code)
	assert.NotContains(t, rec.Body.String(), "ValidationException")
	assert.Empty(t, rec.Header().Get("X-Amzn-Errortype"))
}
