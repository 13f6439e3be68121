package converse_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// TestClassifySDKErrors classifies the errors the real SDK client returns,
// with its retryer down to one attempt so that each error reaches the
// caller as the first attempt made it.
func TestClassifySDKErrors(t *testing.T) {
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
		want    converse.Outcome
	}{
		{name: "throttling", handler: failing(bedrocktest.Throttling()), want: converse.OutcomeRetry},
		{name: "internal server", handler: failing(bedrocktest.InternalServer()), want: converse.OutcomeRetry},
		{name: "service unavailable", handler: failing(bedrocktest.ServiceUnavailable()), want: converse.OutcomeRetry},
		{name: "model timeout", handler: failing(bedrocktest.ModelTimeout()), want: converse.OutcomeRetry},
		{name: "model not ready", handler: failing(bedrocktest.ModelNotReady()), want: converse.OutcomeRetry},
		{name: "validation", handler: failing(bedrocktest.Validation("bad")), want: converse.OutcomeCaller},
		{name: "access denied", handler: failing(bedrocktest.AccessDenied("no")), want: converse.OutcomeCaller},
		{name: "not found", handler: failing(bedrocktest.ResourceNotFound("gone")), want: converse.OutcomeCaller},
		{
			name:    "bad credentials",
			handler: failing(&bedrocktest.Error{Status: 403, Type: "UnrecognizedClientException", Message: "The security token included in the request is invalid."}),
			want:    converse.OutcomeCaller,
		},
		{
			name:    "client timeout",
			handler: bedrocktest.Delay(time.Minute, bedrocktest.Script(answer)),
			client: func(o *bedrockruntime.Options) {
				o.HTTPClient = &http.Client{Transport: http.DefaultTransport, Timeout: 10 * time.Millisecond}
			},
			want: converse.OutcomeRetry,
		},
		{
			name:    "caller's deadline",
			handler: bedrocktest.Delay(time.Minute, bedrocktest.Script(answer)),
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 10*time.Millisecond)
			},
			want: converse.OutcomeStopped,
		},
		{
			name:    "caller's cancel",
			handler: bedrocktest.Script(answer),
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			},
			want: converse.OutcomeStopped,
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
			assert.Equal(t, tt.want, converse.Classify(err), "Classify(%v)", err)
			// The loop's wrapping keeps the answer.
			assert.Equal(t, tt.want, converse.Classify(fmt.Errorf("converse: turn 1: %w", err)))
		})
	}

	t.Run("connection refused", func(t *testing.T) {
		srv := bedrocktest.NewServer(bedrocktest.Script(answer))
		client := srv.Client(once)
		srv.Close()
		_, err := client.Converse(context.Background(), converseInput())
		require.Error(t, err)
		assert.Equal(t, converse.OutcomeRetry, converse.Classify(err), "Classify(%v)", err)
	})
}

// TestClassify classifies error values as the SDK and the loop make them,
// wrapped as the loop wraps them.
func TestClassify(t *testing.T) {
	status := func(code int, err error) error { // an API error as the SDK's deserializer returns it
		return &smithy.OperationError{ServiceID: "Bedrock Runtime", OperationName: "Converse", Err: &awshttp.ResponseError{
			ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: err},
		}}
	}
	turn := func(err error) error { return fmt.Errorf("converse: turn 3: %w", err) }
	tests := []struct {
		name string
		err  error
		want converse.Outcome
	}{
		{"nil", nil, ""},

		{"throttling", turn(status(429, &types.ThrottlingException{Message: aws.String("slow down")})), converse.OutcomeRetry},
		{"internal server", turn(status(500, &types.InternalServerException{})), converse.OutcomeRetry},
		{"service unavailable", turn(&types.ServiceUnavailableException{}), converse.OutcomeRetry},
		{"model timeout", turn(&types.ModelTimeoutException{}), converse.OutcomeRetry},
		{"model not ready", turn(&types.ModelNotReadyException{}), converse.OutcomeRetry},
		{"model stream error", turn(&types.ModelStreamErrorException{}), converse.OutcomeRetry},
		{"a 502 of no known type", status(502, &smithy.GenericAPIError{Code: "BadGateway"}), converse.OutcomeRetry},
		{"a server fault", &smithy.GenericAPIError{Code: "Oops", Fault: smithy.FaultServer}, converse.OutcomeRetry},
		{"request not sent", &smithyhttp.RequestSendError{Err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}, converse.OutcomeRetry},
		{"network error", &net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, converse.OutcomeRetry},
		{"cut response", turn(io.ErrUnexpectedEOF), converse.OutcomeRetry},
		{"stream truncated", turn(converse.ErrStreamTruncated), converse.OutcomeRetry},
		{"stalled", turn(converse.ErrStalled), converse.OutcomeRetry},

		{"validation", turn(status(400, &types.ValidationException{})), converse.OutcomeCaller},
		{"access denied", turn(&types.AccessDeniedException{}), converse.OutcomeCaller},
		{"not found", turn(&types.ResourceNotFoundException{}), converse.OutcomeCaller},
		{"quota", turn(&types.ServiceQuotaExceededException{}), converse.OutcomeCaller},
		{"a client fault", &smithy.GenericAPIError{Code: "Nope", Fault: smithy.FaultClient}, converse.OutcomeCaller},
		{"a 403 of no known type", status(403, &smithy.GenericAPIError{Code: "UnrecognizedClientException"}), converse.OutcomeCaller},
		{"bad decisions", fmt.Errorf("converse: %w: no decision for t1", converse.ErrDecision), converse.OutcomeCaller},
		{"tool choice", turn(converse.ErrToolChoice), converse.OutcomeCaller},
		{"max tokens in a call", turn(converse.ErrMaxTokens), converse.OutcomeCaller},
		{"context window", turn(fmt.Errorf("%w: %w", converse.ErrContextWindowExceeded, &types.ValidationException{})), converse.OutcomeCaller},

		{"turn limit", turn(converse.ErrMaxTurns), converse.OutcomeLimit},
		{"budget", turn(&converse.BudgetError{Limit: "cost", Max: 0.01}), converse.OutcomeLimit},
		{"no answer in the turns", turn(fmt.Errorf("%w (3 model calls): %w: not JSON", converse.ErrMaxTurns, converse.ErrInvalidAnswer)), converse.OutcomeLimit},

		{"paused", &converse.PausedError{Pending: []converse.Call{{ID: "t1", Tool: "send"}}}, converse.OutcomePaused},

		{"a prompt for a paused conversation", fmt.Errorf("converse: %w: Resume with a decision for each pending call", converse.ErrPaused), converse.OutcomeConflict},
		{"interrupted", fmt.Errorf("converse: %w", converse.ErrInterrupted), converse.OutcomeConflict},
		{"nothing to resume", fmt.Errorf("converse: %w", converse.ErrNothingToResume), converse.OutcomeConflict},
		{"session changed", turn(fmt.Errorf("saving: %w", converse.ErrSessionChanged)), converse.OutcomeConflict},
		{"session locked", fmt.Errorf("converse: %w by process 42", converse.ErrSessionLocked), converse.OutcomeConflict},
		{"stale step", converse.ErrStaleStep, converse.OutcomeConflict},

		{"stopped", turn(converse.ErrStopped), converse.OutcomeStopped},
		{"cancelled", turn(context.Canceled), converse.OutcomeStopped},
		{"the SDK's cancel", &smithy.CanceledError{Err: context.Canceled}, converse.OutcomeStopped},
		{"deadline", turn(context.DeadlineExceeded), converse.OutcomeStopped},

		{"malformed tool use", turn(converse.ErrMalformedToolUse), converse.OutcomeInternal},
		{"malformed output", turn(converse.ErrMalformedModelOutput), converse.OutcomeInternal},
		{"invalid answer", turn(converse.ErrInvalidAnswer), converse.OutcomeInternal},
		{"an API error of no fault", &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException"}, converse.OutcomeInternal},
		{"anything else", errors.New("disk full"), converse.OutcomeInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, converse.Classify(tt.err), "Classify(%v)", tt.err)
		})
	}
}

func converseInput() *bedrockruntime.ConverseInput {
	return &bedrockruntime.ConverseInput{
		ModelId:  aws.String(benchModelID),
		Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hi."}}}},
	}
}
