package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

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
