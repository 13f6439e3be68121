package converse_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// TestRetryable classifies the errors the real SDK client returns, with its
// retryer down to one attempt so that each error reaches the caller as the
// first attempt made it.
func TestRetryable(t *testing.T) {
	once := func(o *bedrockruntime.Options) { o.Retryer = retry.AddWithMaxAttempts(o.Retryer, 1) }
	answer := bedrocktest.Text("ok")
	failing := func(e *bedrocktest.Error) bedrocktest.Handler {
		return bedrocktest.Fail(1, e, bedrocktest.Script(answer))
	}
	tests := []struct {
		name    string
		handler bedrocktest.Handler
		ctx     func() (context.Context, context.CancelFunc)
		client  func(*bedrockruntime.Options)
		want    bool
	}{
		{name: "throttling", handler: failing(bedrocktest.Throttling()), want: true},
		{name: "internal server", handler: failing(bedrocktest.InternalServer()), want: true},
		{name: "service unavailable", handler: failing(bedrocktest.ServiceUnavailable()), want: true},
		{name: "model timeout", handler: failing(bedrocktest.ModelTimeout()), want: true},
		{name: "model not ready", handler: failing(bedrocktest.ModelNotReady()), want: true},
		{name: "validation", handler: failing(bedrocktest.Validation("bad")), want: false},
		{name: "access denied", handler: failing(bedrocktest.AccessDenied("no")), want: false},
		{name: "not found", handler: failing(bedrocktest.ResourceNotFound("gone")), want: false},
		{
			name:    "client timeout",
			handler: bedrocktest.Delay(time.Minute, bedrocktest.Script(answer)),
			client: func(o *bedrockruntime.Options) {
				o.HTTPClient = &http.Client{Transport: http.DefaultTransport, Timeout: 10 * time.Millisecond}
			},
			want: true,
		},
		{
			name:    "caller's deadline",
			handler: bedrocktest.Delay(time.Minute, bedrocktest.Script(answer)),
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 10*time.Millisecond)
			},
			want: false,
		},
		{
			name:    "caller's cancel",
			handler: bedrocktest.Script(answer),
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			},
			want: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := bedrocktest.NewServer(tt.handler)
			defer srv.Close()
			opts := []func(*bedrockruntime.Options){once}
			if tt.client != nil {
				opts = append(opts, tt.client)
			}
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			_, err := srv.Client(opts...).Converse(ctx, converseInput())
			require.Error(t, err)
			assert.Equal(t, tt.want, converse.Retryable(err), "Retryable(%v)", err)
			// The loop's wrapping keeps the answer.
			assert.Equal(t, tt.want, converse.Retryable(fmt.Errorf("converse: turn 1: %w", err)))
		})
	}

	t.Run("connection refused", func(t *testing.T) {
		srv := bedrocktest.NewServer(bedrocktest.Script(answer))
		client := srv.Client(once)
		srv.Close()
		_, err := client.Converse(context.Background(), converseInput())
		require.Error(t, err)
		assert.True(t, converse.Retryable(err), "Retryable(%v)", err)
	})
	t.Run("the loop's own", func(t *testing.T) {
		for _, err := range []error{converse.ErrMaxTurns, converse.ErrMaxTokens, converse.ErrToolChoice, converse.ErrBudget} {
			assert.False(t, converse.Retryable(err), "Retryable(%v)", err)
		}
		assert.True(t, converse.Retryable(converse.ErrStreamTruncated))
		assert.False(t, converse.Retryable(nil))
	})
}

func converseInput() *bedrockruntime.ConverseInput {
	return &bedrockruntime.ConverseInput{
		ModelId:  aws.String(benchModelID),
		Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hi."}}}},
	}
}
