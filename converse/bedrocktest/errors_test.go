package bedrocktest

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithy "github.com/aws/smithy-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func converseInput() *bedrockruntime.ConverseInput {
	return &bedrockruntime.ConverseInput{ModelId: aws.String(testModel), Messages: []types.Message{userText("hi")}}
}

func TestErrorsAsSDKTypes(t *testing.T) {
	tests := []struct {
		e      *Error
		status int
		as     func(error) bool
	}{
		{Validation("bad input"), 400, func(err error) bool { var e *types.ValidationException; return errors.As(err, &e) }},
		{Throttling(), 429, func(err error) bool { var e *types.ThrottlingException; return errors.As(err, &e) }},
		{AccessDenied("no access"), 403, func(err error) bool { var e *types.AccessDeniedException; return errors.As(err, &e) }},
		{ResourceNotFound("no such model"), 404, func(err error) bool { var e *types.ResourceNotFoundException; return errors.As(err, &e) }},
		{ModelTimeout(), 408, func(err error) bool { var e *types.ModelTimeoutException; return errors.As(err, &e) }},
		{ModelNotReady(), 429, func(err error) bool { var e *types.ModelNotReadyException; return errors.As(err, &e) }},
		{InternalServer(), 500, func(err error) bool { var e *types.InternalServerException; return errors.As(err, &e) }},
		{ServiceUnavailable(), 503, func(err error) bool { var e *types.ServiceUnavailableException; return errors.As(err, &e) }},
	}
	for _, tt := range tests {
		t.Run(tt.e.Type, func(t *testing.T) {
			srv := NewServer(Fail(2, tt.e, Script()))
			defer srv.Close()
			_, err := srv.Client(noRetry).Converse(context.Background(), converseInput())
			require.Error(t, err)
			assert.True(t, tt.as(err), "typed error", err)
			var api smithy.APIError
			require.ErrorAs(t, err, &api)
			assert.Equal(t, tt.e.Type, api.ErrorCode())
			assert.Equal(t, tt.e.Message, api.ErrorMessage())
			var re *awshttp.ResponseError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tt.status, re.HTTPStatusCode())

			// The same error ends a ConverseStream call before any event.
			_, err = srv.Client(noRetry).ConverseStream(context.Background(), streamInput(userText("hi")))
			assert.True(t, tt.as(err), "typed error from ConverseStream", err)
		})
	}
}

func TestThrottledThenSuccess(t *testing.T) {
	// The SDK's standard retryer makes 3 attempts: two throttles, then the
	// answer.
	srv := NewServer(Throttle(2, Script(Text("finally"))))
	defer srv.Close()
	out, err := srv.Client().Converse(context.Background(), converseInput())
	require.NoError(t, err)
	assert.Equal(t, "finally", out.Output.(*types.ConverseOutputMemberMessage).Value.Content[0].(*types.ContentBlockMemberText).Value)
	assert.Len(t, srv.Requests(), 3)
}

func TestThrottledBeyondRetries(t *testing.T) {
	srv := NewServer(Throttle(2, Script(Text("unreached"))))
	defer srv.Close()
	// Two attempts, no waiting between them: both throttled.
	client := srv.Client(func(o *bedrockruntime.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = 2
			so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		})
	})
	_, err := client.Converse(context.Background(), converseInput())
	var te *types.ThrottlingException
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "Too many requests, please wait before trying again.", te.ErrorMessage())
	var me *retry.MaxAttemptsError
	assert.ErrorAs(t, err, &me)
	assert.Len(t, srv.Requests(), 2)
}

func TestDelayAndClientTimeout(t *testing.T) {
	srv := NewServer(Delay(5*time.Second, Script(Text("too late"))))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	// Had the client waited for the handler, the call would have succeeded
	// with "too late": the error itself shows it gave up at its deadline.
	_, err := srv.Client(noRetry).Converse(ctx, converseInput())
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "deadline exceeded", err)
}

func TestDelayServes(t *testing.T) {
	srv := NewServer(Delay(20*time.Millisecond, Script(Text("later"))))
	defer srv.Close()
	start := time.Now()
	_, err := srv.Client().Converse(context.Background(), converseInput())
	require.NoError(t, err)
	assert.True(t, time.Since(start) >= 20*time.Millisecond, "delayed")
}

func TestErrorHeaderForm(t *testing.T) {
	rec := &headerRecorder{header: http.Header{}}
	writeError(rec, ModelTimeout())
	assert.Equal(t, 408, rec.status)
	assert.Equal(t, "ModelTimeoutException", rec.header.Get("X-Amzn-ErrorType"))
	assert.Equal(t, `{"message":"Model has timed out in processing the request. Try your request again."}`, string(rec.body))
}

type headerRecorder struct {
	header http.Header
	status int
	body   []byte
}

func (r *headerRecorder) Header() http.Header { return r.header }
func (r *headerRecorder) WriteHeader(s int)   { r.status = s }
func (r *headerRecorder) Write(b []byte) (int, error) {
	r.body = append(r.body, b...)
	return len(b), nil
}
