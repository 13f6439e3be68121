package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// otlpReceiver is a loopback OTLP/HTTP collector: it decodes the real
// protobuf export requests the exporter sends.
type otlpReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*collectortrace.ExportTraceServiceRequest
	headers  []http.Header
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if req.URL.Path != "/v1/traces" || err != nil {
			http.NotFound(w, req)
			return
		}
		var export collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &export); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.requests = append(r.requests, &export)
		r.headers = append(r.headers, req.Header.Clone())
		r.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.Close)
	return r
}

// spans returns the spans received, by name, with the service.name of
// their resource.
func (r *otlpReceiver) spans() (map[string][]*tracepb.Span, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	spans := map[string][]*tracepb.Span{}
	var services []string
	for _, req := range r.requests {
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.Key == "service.name" {
					services = append(services, kv.GetValue().GetStringValue())
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans[s.Name] = append(spans[s.Name], s)
				}
			}
		}
	}
	return spans, services
}

func TestTelemetryExport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		handler bedrocktest.Handler
		code    int
	}{
		{"success", multiply(), 0},
		{"failure", bedrocktest.Fail(10, bedrocktest.AccessDenied("no"), multiply()), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rcv := newOTLPReceiver(t)
			srv := newServer(t, tc.handler)
			out := runBinary(t, testEnv(t,
				"OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL,
				"OTEL_EXPORTER_OTLP_HEADERS=x-team=tools",
				"OTEL_SERVICE_NAME=converse-test",
				"OTEL_RESOURCE_ATTRIBUTES=deployment.environment.name=test",
			), nil, "-endpoint", srv.URL, "What is 6 times 7?")
			require.Equal(t, tc.code, out.code, out.stderr)
			spans, services := rcv.spans()
			require.NotEmpty(t, services, "spans were flushed before exit")
			for _, s := range services {
				assert.Equal(t, "converse-test", s)
			}
			send := spans["invoke_agent"]
			require.Len(t, send, 1)
			require.NotEmpty(t, spans["chat "+defaultModel])
			for _, c := range spans["chat "+defaultModel] {
				assert.Equal(t, send[0].SpanId, c.ParentSpanId)
				assert.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, c.Kind)
			}
			if tc.code == 0 {
				require.Len(t, spans["execute_tool calculator"], 1)
				assert.Equal(t, send[0].SpanId, spans["execute_tool calculator"][0].ParentSpanId)
			} else {
				assert.Equal(t, tracepb.Status_STATUS_CODE_ERROR, send[0].GetStatus().GetCode())
			}
			rcv.mu.Lock()
			assert.Equal(t, "tools", rcv.headers[0].Get("x-team"), "OTEL_EXPORTER_OTLP_HEADERS")
			rcv.mu.Unlock()
		})
	}
}

// TestTelemetryOff checks that without the OTLP variables, or with
// OTEL_SDK_DISABLED, nothing is exported.
func TestTelemetryOff(t *testing.T) {
	t.Parallel()
	rcv := newOTLPReceiver(t)
	for _, env := range [][]string{
		nil,
		{"OTEL_SDK_DISABLED=true", "OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL},
		{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=", "OTEL_SERVICE_NAME=x"},
	} {
		srv := newServer(t, multiply())
		out := runBinary(t, testEnv(t, env...), nil, "-endpoint", srv.URL, "What is 6 times 7?")
		require.Equal(t, 0, out.code, out.stderr)
	}
	spans, _ := rcv.spans()
	assert.Empty(t, spans)
}

func TestTelemetryBadProtocol(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	out := runInProcess(t, nil, "-endpoint", "http://127.0.0.1:1", "hi")
	assert.Equal(t, 2, out.code)
	assert.Contains(t, out.stderr, `OTEL_EXPORTER_OTLP_PROTOCOL "http/json" is not supported`)
}

// TestTelemetryFlushOnInterrupt: Ctrl-C while the model call is in flight
// exits 130 only after the spans of the interrupted conversation, failed as
// cancelled, reached the collector.
func TestTelemetryFlushOnInterrupt(t *testing.T) {
	t.Parallel()
	rcv := newOTLPReceiver(t)
	reached, done := make(chan struct{}), make(chan struct{})
	defer close(done)
	var once sync.Once
	srv := newServer(t, bedrocktest.HandlerFunc(func(ctx context.Context, _ *bedrocktest.Request) (*bedrocktest.Reply, error) {
		once.Do(func() { close(reached) })
		select { // the model call stalls until converse hangs up
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-done:
			return nil, context.Canceled
		}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, testEnv(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL), "-endpoint", srv.URL, "What is 6 times 7?")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-reached:
	case err := <-exited:
		require.FailNow(t, "converse exited before calling the model", "%v\n%s", err, stderr.String())
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err := <-exited
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "stderr:\n%s", stderr.String())
	checkRace(t, exit.ExitCode(), stderr.String())
	require.Equal(t, exitInterrupted, exit.ExitCode(), stderr.String())

	spans, services := rcv.spans()
	require.NotEmpty(t, services, "spans were flushed before exit")
	send, chats := spans["invoke_agent"], spans["chat "+defaultModel]
	require.Len(t, send, 1)
	require.Len(t, chats, 1)
	assert.Equal(t, send[0].SpanId, chats[0].ParentSpanId)
	for _, s := range []*tracepb.Span{send[0], chats[0]} {
		assert.Equal(t, tracepb.Status_STATUS_CODE_ERROR, s.GetStatus().GetCode(), s.Name)
		assert.Equal(t, "cancelled", spanAttr(s, "error.type"), s.Name)
	}
}

// spanAttr is the string value of a span's attribute key.
func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}
