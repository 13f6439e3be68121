package converse_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// A session token of the shape STS issues, and a SigV4 signature; neither
// is real.
const (
	spanToken     = "IQoJb3JpZ2luX2VjEAAaCXVzLWVhc3QtMSJHMEUCIQDspanTestTokenXYZ0123456789abcdef"
	spanSignature = "4f0a1e0c9b5d7a3e2f1c8b6d5a4e3f2c1b0a9d8e7f6c5b4a3e2d1c0b9a8f7e6d"
)

// signedRequestEcho is an InvalidSignatureException's message, which
// echoes the canonical request, session token and signature included.
const signedRequestEcho = "The request signature we calculated does not match the signature you provided.\n\n" +
	"The Canonical String for this request should have been\n'POST\n/model/x/converse\n\n" +
	"host:bedrock-runtime.us-east-1.amazonaws.com\nx-amz-date:20261201T070000Z\n" +
	"x-amz-security-token:" + spanToken + "\n'\n" +
	"SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=" + spanSignature

// spanTexts is every text a span carries: its status description, its
// string attributes and its events' attributes.
func spanTexts(s sdktrace.ReadOnlySpan) []string {
	texts := []string{s.Status().Description}
	for _, kv := range s.Attributes() {
		texts = append(texts, kv.Value.String())
	}
	for _, e := range s.Events() {
		texts = append(texts, e.Name)
		for _, kv := range e.Attributes {
			texts = append(texts, kv.Value.String())
		}
	}
	return texts
}

// TestTelemetryRedactsSecrets: an AWS error that echoes the signed request
// fails the chat and invoke_agent spans. Their description still says what
// failed but holds no token or signature. With RecordContent, a tool result
// holding them is recorded redacted.
func TestTelemetryRedactsSecrets(t *testing.T) {
	echo, err := tools.New("echo", "Echoes an AWS error.", func(ctx context.Context, _ struct{}) (string, error) {
		return signedRequestEcho, nil
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(echo)
	require.NoError(t, err)
	var calls atomic.Int32
	h := bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		if calls.Add(1) == 1 {
			return bedrocktest.ToolUse("", bedrocktest.Call{ID: "e1", Name: "echo"}), nil
		}
		return nil, &bedrocktest.Error{Status: http.StatusForbidden, Type: "InvalidSignatureException", Message: signedRequestEcho}
	})
	tr := newTraced(t)
	srv := bedrocktest.NewServer(h)
	t.Cleanup(srv.Close)
	client := srv.Client(func(o *bedrockruntime.Options) { o.Retryer = aws.NopRetryer{} })
	_, err = converse.New(client, claude, reg, tr.options,
		func(o *converse.Options) { o.Telemetry.RecordContent = true }).Send(context.Background(), "Hi")

	require.ErrorContains(t, err, spanToken, "the error itself is the caller's, unredacted")

	failed := []sdktrace.ReadOnlySpan{tr.named("chat " + claude)[1], tr.one(t, "invoke_agent")}
	for _, s := range failed {
		assert.Equal(t, codes.Error, s.Status().Code, s.Name())
		assert.Contains(t, s.Status().Description, "InvalidSignatureException", s.Name())
		assert.Contains(t, s.Status().Description, "[REDACTED]", s.Name())
	}
	spans := tr.spans.Ended()
	require.Len(t, spans, 4, "two chats, the call, the Send")
	for _, s := range spans {
		for _, text := range spanTexts(s) {
			for _, secret := range []string{spanToken, spanSignature} {
				assert.False(t, strings.Contains(text, secret), "span %s holds a secret: %s", s.Name(), text)
			}
		}
	}
	assert.Contains(t, attrs(tr.one(t, "execute_tool echo"))["gen_ai.tool.call.result"].AsString(), "[REDACTED]")
}
