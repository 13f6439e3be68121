package lambdatool_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/lambdatool"
)

// stubResponse is an answer of the Lambda Invoke API on the wire.
type stubResponse struct {
	status int
	header map[string]string
	body   string
}

// stubRequest is what the stub received.
type stubRequest struct {
	Path, Query string
	Header      http.Header
	Body        []byte
}

// lambdaStub answers every Invoke with resp, as Lambda's restJson1 protocol
// does, and keeps the requests.
type lambdaStub struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []stubRequest
}

func newLambdaStub(t *testing.T, resp stubResponse) *lambdaStub {
	t.Helper()
	s := &lambdaStub{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, stubRequest{Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		s.mu.Unlock()
		for k, v := range resp.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(resp.status)
		io.WriteString(w, resp.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *lambdaStub) requests() []stubRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]stubRequest(nil), s.reqs...)
}

// apiError is Lambda's answer for an error of the API.
func apiError(status int, code, body string, header ...string) stubResponse {
	h := map[string]string{"X-Amzn-ErrorType": code, "Content-Type": "application/json"}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	return stubResponse{status: status, header: h, body: body}
}

// functionError is Lambda's answer for a failed function: 200, the header,
// the error object.
func functionError(kind, payload string) stubResponse {
	return stubResponse{status: 200, header: map[string]string{"X-Amz-Function-Error": kind, "X-Amz-Executed-Version": "7"}, body: payload}
}

// Lambda's answers, as its wire protocol carries them, become the call's
// result or an error result worded for the model.
func TestLambdaAnswers(t *testing.T) {
	large := `"` + strings.Repeat("x", 1<<20) + `"`
	tests := []struct {
		name      string
		resp      stubResponse
		opts      []func(*tools.Options)
		want      string   // the output, if no error
		wantErr   []string // in the error's text
		notErr    []string
		is        error
		fnErr     *lambdatool.FunctionError
		requests  int // 1 unless set
		throttled bool
		logged    string
	}{{
		name: "success",
		resp: stubResponse{status: 200, header: map[string]string{"X-Amz-Executed-Version": "7"}, body: `{"width": 640}`},
		want: `{"width": 640}`,
	}, {
		name:    "unhandled function error",
		resp:    functionError("Unhandled", `{"errorMessage": "index out of range [3] with length 3", "errorType": "runtime.Error", "stackTrace": [{"path": "main.go", "line": 47, "label": "handle"}]}`),
		wantErr: []string{"the function failed: runtime.Error: index out of range [3] with length 3"},
		notErr:  []string{"stackTrace", "main.go", "handle"},
		fnErr:   &lambdatool.FunctionError{Kind: "Unhandled", Type: "runtime.Error", Message: "index out of range [3] with length 3"},
	}, {
		name:    "handled function error",
		resp:    functionError("Handled", `{"errorMessage": "no such image", "errorType": "NotFound"}`),
		wantErr: []string{"the function failed: NotFound: no such image"},
		fnErr:   &lambdatool.FunctionError{Kind: "Handled", Type: "NotFound", Message: "no such image"},
	}, {
		name:    "function timeout",
		resp:    functionError("Unhandled", `{"errorType": "Sandbox.Timedout", "errorMessage": "RequestId: 1f3c Error: Task timed out after 3.00 seconds"}`),
		wantErr: []string{"the function failed: Sandbox.Timedout: RequestId: 1f3c Error: Task timed out after 3.00 seconds"},
		fnErr:   &lambdatool.FunctionError{Kind: "Unhandled", Type: "Sandbox.Timedout", Message: "RequestId: 1f3c Error: Task timed out after 3.00 seconds"},
	}, {
		name:    "function error that is not an error object",
		resp:    functionError("Unhandled", `out of memory`),
		wantErr: []string{"the function failed: out of memory"},
		fnErr:   &lambdatool.FunctionError{Kind: "Unhandled", Message: "out of memory"},
	}, {
		name:    "function error without a payload",
		resp:    functionError("Unhandled", ``),
		wantErr: []string{"the function failed: (empty)"},
	}, {
		name: "throttled after the SDK's retries",
		resp: apiError(429, "TooManyRequestsException",
			`{"Type": "User", "message": "Rate Exceeded.", "Reason": "ReservedFunctionConcurrentInvocationLimitExceeded"}`, "Retry-After", "2"),
		wantErr:   []string{"the function is throttled: too many requests (ReservedFunctionConcurrentInvocationLimitExceeded); Lambda says to retry after 2 seconds"},
		requests:  3,
		throttled: true,
	}, {
		name:    "access denied",
		resp:    apiError(403, "AccessDeniedException", `{"Message": "User: arn:aws:sts::123456789012:assumed-role/app/session is not authorized to perform: lambda:InvokeFunction"}`),
		wantErr: []string{"access to the function was denied"},
		notErr:  []string{"arn:aws:sts", "lambda:InvokeFunction", "403"},
		logged:  "lambda:InvokeFunction",
	}, {
		name:    "function not found",
		resp:    apiError(404, "ResourceNotFoundException", `{"Type": "User", "Message": "Function not found: arn:aws:lambda:us-east-1:123456789012:function:resize:live"}`),
		wantErr: []string{"the function could not be invoked: ResourceNotFoundException: Function not found"},
		notErr:  []string{"operation error", "RequestID", "StatusCode"},
		logged:  "could not be invoked",
	}, {
		name:    "response not JSON",
		resp:    stubResponse{status: 200, body: "Task timed out after 3.00 seconds"},
		wantErr: []string{"the function's response is not JSON: Task timed out after 3.00 seconds"},
	}, {
		name:    "empty response",
		resp:    stubResponse{status: 200},
		wantErr: []string{"the function's response is empty, not JSON"},
	}, {
		name:    "response over 1 MiB",
		resp:    stubResponse{status: 200, body: large},
		wantErr: []string{"output too large: the function's response is 1048578 bytes, over the limit of 1048576"},
		is:      tools.ErrOutputTooLarge,
	}, {
		name: "response within a larger output limit",
		resp: stubResponse{status: 200, body: large},
		opts: []func(*tools.Options){func(o *tools.Options) { o.MaxOutput = 2 << 20 }},
		want: large,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stub := newLambdaStub(t, tt.resp)
			var log bytes.Buffer
			fn := lambdatool.Function{Name: "resize", Logger: slog.New(slog.NewTextHandler(&log, nil))}
			tool, err := lambdatool.NewRaw(newClient(stub.URL), fn, "resize_image", "Resizes an image.", modeSchema, tt.opts...)
			require.NoError(t, err)
			v, err := tool.Call(context.Background(), json.RawMessage(`{"mode": "resize"}`))
			wantRequests := tt.requests
			if wantRequests == 0 {
				wantRequests = 1
			}
			assert.Len(t, stub.requests(), wantRequests)
			if tt.logged != "" {
				assert.Contains(t, log.String(), tt.logged)
			}
			if tt.wantErr == nil {
				require.NoError(t, err)
				assert.JSONEq(t, tt.want, string(v.(json.RawMessage)))
				return
			}
			require.Error(t, err)
			for _, s := range tt.wantErr {
				assert.Contains(t, err.Error(), s)
			}
			for _, s := range append(tt.notErr, "lambdatool", "*types.", "operation error") {
				assert.NotContains(t, err.Error(), s)
			}
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			if tt.fnErr != nil {
				var fe *lambdatool.FunctionError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, tt.fnErr, fe)
			}
			if tt.throttled {
				var te *types.TooManyRequestsException
				assert.ErrorAs(t, err, &te)
			}
		})
	}
}

// The request is a synchronous Invoke of the function and qualifier, with
// the validated input (defaults filled in) as the payload and the call's
// context in ClientContext.custom; an invalid input is never sent.
func TestLambdaRequest(t *testing.T) {
	stub := newLambdaStub(t, stubResponse{status: 200, body: `{}`})
	schema := json.RawMessage(`{"type": "object", "properties": {"width": {"type": "integer", "default": 640}, "url": {"type": "string"}}, "required": ["url"]}`)
	fn := lambdatool.Function{Name: "arn:aws:lambda:us-east-1:123456789012:function:resize", Qualifier: "live", TraceContext: propagate}
	tool, err := lambdatool.NewRaw(newClient(stub.URL), fn, "resize_image", "Resizes an image.", schema)
	require.NoError(t, err)

	_, err = tool.Call(context.Background(), json.RawMessage(`{"width": 10}`))
	require.ErrorIs(t, err, tools.ErrInvalidInput)
	assert.Empty(t, stub.requests(), "an invalid input reaches no function")

	_, err = tool.Call(tools.WithCallID(context.Background(), "tooluse_abc"), json.RawMessage(`{"url": "s3://b/k.png"}`))
	require.NoError(t, err)
	reqs := stub.requests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	assert.Equal(t, "/2015-03-31/functions/arn:aws:lambda:us-east-1:123456789012:function:resize/invocations", r.Path)
	assert.Equal(t, "Qualifier=live", r.Query)
	assert.Equal(t, "RequestResponse", r.Header.Get("X-Amz-Invocation-Type"))
	assert.JSONEq(t, `{"url": "s3://b/k.png", "width": 640}`, string(r.Body))
	cc, err := base64.StdEncoding.DecodeString(r.Header.Get("X-Amz-Client-Context"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"custom": {"toolUseId": "tooluse_abc", "toolName": "resize_image",
		"bedrockAgentCoreToolName": "resize_image", "traceparent": "`+traceparent+`"}}`, string(cc))
}

// Trace context that would take the client context over Lambda's limit is
// left out, and logged; the rest is sent.
func TestClientContextLimit(t *testing.T) {
	stub := newLambdaStub(t, stubResponse{status: 200, body: `{}`})
	var log bytes.Buffer
	fn := lambdatool.Function{
		Name:   "resize",
		Logger: slog.New(slog.NewTextHandler(&log, nil)),
		TraceContext: func(ctx context.Context, carrier map[string]string) {
			propagate(ctx, carrier)
			carrier["tracestate"] = strings.Repeat("v", lambdatool.MaxClientContext)
			carrier["toolName"] = "spoofed" // the package's own keys stay its own
		},
	}
	tool, err := lambdatool.NewRaw(newClient(stub.URL), fn, "resize_image", "Resizes an image.", modeSchema)
	require.NoError(t, err)
	_, err = tool.Call(tools.WithCallID(context.Background(), "tooluse_1"), json.RawMessage(`{"mode": "x"}`))
	require.NoError(t, err)
	header := stub.requests()[0].Header.Get("X-Amz-Client-Context")
	assert.LessOrEqual(t, len(header), lambdatool.MaxClientContext)
	cc, err := base64.StdEncoding.DecodeString(header)
	require.NoError(t, err)
	var got struct{ Custom map[string]string }
	require.NoError(t, json.Unmarshal(cc, &got))
	assert.Equal(t, map[string]string{"toolUseId": "tooluse_1", "toolName": "resize_image",
		"bedrockAgentCoreToolName": "resize_image", "traceparent": traceparent}, got.Custom)
	assert.Contains(t, log.String(), "key=tracestate")
}

func TestNewErrors(t *testing.T) {
	client := newClient("http://127.0.0.1:1")
	tests := []struct {
		name string
		make func() (*tools.Tool, error)
		want string
	}{
		{"no client", func() (*tools.Tool, error) {
			return lambdatool.NewRaw(nil, lambdatool.Function{Name: "f"}, "t", "Tool.", modeSchema)
		}, `lambdatool: tool "t": no Lambda client`},
		{"no function", func() (*tools.Tool, error) {
			return lambdatool.New[struct{}](client, lambdatool.Function{Name: " "}, "t", "Tool.")
		}, `lambdatool: tool "t": no function name`},
		{"bad schema", func() (*tools.Tool, error) {
			return lambdatool.NewRaw(client, lambdatool.Function{Name: "f"}, "t", "Tool.", json.RawMessage(`{"type": "string"}`))
		}, `type must be "object"`},
		{"bad option", func() (*tools.Tool, error) {
			return lambdatool.NewRaw(client, lambdatool.Function{Name: "f"}, "t", "Tool.", modeSchema, func(o *tools.Options) { o.Env = map[string]string{"A": "b"} })
		}, "Command tools only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := tt.make()
			assert.Nil(t, tool)
			require.ErrorIs(t, err, tools.ErrInvalidTool)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// Without TraceContext, the trace context of the call's OpenTelemetry span
// goes with the global propagator, and none goes without a span.
func TestClientContextOpenTelemetry(t *testing.T) {
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })
	stub := newLambdaStub(t, stubResponse{status: 200, body: `{}`})
	tool, err := lambdatool.NewRaw(newClient(stub.URL), lambdatool.Function{Name: "resize"}, "resize_image", "Resizes an image.", modeSchema)
	require.NoError(t, err)
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	for _, ctx := range []context.Context{ctx, context.Background()} {
		_, err = tool.Call(ctx, json.RawMessage(`{"mode": "x"}`))
		require.NoError(t, err)
	}
	reqs := stub.requests()
	require.Len(t, reqs, 2)
	custom := func(r stubRequest) map[string]string {
		cc, err := base64.StdEncoding.DecodeString(r.Header.Get("X-Amz-Client-Context"))
		require.NoError(t, err)
		var got struct{ Custom map[string]string }
		require.NoError(t, json.Unmarshal(cc, &got))
		return got.Custom
	}
	assert.Equal(t, traceparent, custom(reqs[0])["traceparent"])
	assert.NotContains(t, custom(reqs[1]), "traceparent")
}

// TestInvokeAfterALostAnswer: an Invoke that reached Lambda but whose
// answer was lost on the way is sent again by the client's retryer. So
// the function runs twice for one call, as the package doc says. Both
// times it gets the call's toolUseId, the key that makes it idempotent.
// With a retryer of one attempt it runs once and the call fails.
func TestInvokeAfterALostAnswer(t *testing.T) {
	for _, tt := range []struct {
		name     string
		attempts int
		runs     int
	}{{"the standard retryer", 0, 2}, {"one attempt", 1, 1}} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var ids []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.ReadAll(r.Body)
				cc, _ := base64.StdEncoding.DecodeString(r.Header.Get("X-Amz-Client-Context"))
				var c struct {
					Custom map[string]string `json:"custom"`
				}
				json.Unmarshal(cc, &c)
				mu.Lock()
				ids = append(ids, c.Custom["toolUseId"]) // the function ran
				first := len(ids) == 1
				mu.Unlock()
				if first { // its answer is lost: the connection drops
					conn, _, err := w.(http.Hijacker).Hijack()
					if err == nil {
						conn.Close()
					}
					return
				}
				io.WriteString(w, `{"sent": true}`)
			}))
			t.Cleanup(srv.Close)
			client := newClient(srv.URL)
			if tt.attempts > 0 {
				client = lambda.New(client.Options(), func(o *lambda.Options) { o.Retryer = retry.AddWithMaxAttempts(o.Retryer, tt.attempts) })
			}
			tool, err := lambdatool.NewRaw(client, lambdatool.Function{Name: "notify"}, "notify", "Sends a notice.", json.RawMessage(`{"type": "object"}`))
			require.NoError(t, err)
			out, err := tool.Call(tools.WithCallID(context.Background(), "tooluse_1"), json.RawMessage(`{}`))
			if tt.runs == 1 {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
				assert.JSONEq(t, `{"sent": true}`, string(out.(json.RawMessage)))
			}
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, slices.Repeat([]string{"tooluse_1"}, tt.runs), ids)
		})
	}
}
