package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
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
	metrics  []string // the names of the metrics received
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if req.URL.Path == "/v1/metrics" && err == nil {
			r.receiveMetrics(w, body)
			return
		}
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

// receiveMetrics keeps the names of the metrics of an export request.
func (r *otlpReceiver) receiveMetrics(w http.ResponseWriter, body []byte) {
	var export collectormetrics.ExportMetricsServiceRequest
	if err := proto.Unmarshal(body, &export); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rm := range export.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				r.metrics = append(r.metrics, m.Name)
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&collectormetrics.ExportMetricsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
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
		{"failure", bedrocktest.Fail(10, bedrocktest.AccessDenied("no"), multiply()), exitCaller},
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
			send := spans["invoke_agent converse"]
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

// TestTelemetryConventions: OTEL_EXPORTER_OTLP_ENDPOINT alone exports
// metrics too; every span of a chat has its one gen_ai.conversation.id (the
// -session file's name with -session) and gen_ai.agent.name (-agent-name,
// default converse); content is recorded only with
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
func TestTelemetryConventions(t *testing.T) {
	t.Parallel()
	session := filepath.Join(t.TempDir(), "trip")
	for _, tc := range []struct {
		name             string
		env, args        []string
		stdin            bool // a chat of two prompts on a terminal
		wantID, wantName string
		content          bool
	}{
		{name: "a chat", stdin: true, wantName: "converse"},
		{name: "a session", args: []string{"-session", session, "-agent-name", "planner", "What is 6 times 7?"}, wantID: "trip", wantName: "planner"},
		{name: "content", env: []string{"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true"}, args: []string{"What is 6 times 7?"}, wantName: "converse", content: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rcv := newOTLPReceiver(t)
			srv := newServer(t, bedrocktest.Script(
				bedrocktest.ToolUse("Let me work that out.", bedrocktest.Call{ID: "tooluse_calc1", Name: "calculator", Input: map[string]any{"a": 6, "b": 7, "operation": "multiply"}}),
				bedrocktest.Text("6 × 7 = 42."),
				bedrocktest.Text("Again, 42.")))
			var stdin io.Reader
			if tc.stdin {
				tty, keyboard := openTerminal(t)
				_, err := keyboard.WriteString("What is 6 times 7?\nAnd again?\n\x04")
				require.NoError(t, err)
				stdin = tty
			}
			out := runBinary(t, testEnv(t, append(tc.env, "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL)...), stdin, append([]string{"-endpoint", srv.URL}, tc.args...)...)
			require.Equal(t, 0, out.code, out.stderr)
			spans, _ := rcv.spans()
			ids := map[string]bool{}
			n := 0
			for name, ss := range spans {
				for _, s := range ss {
					n++
					ids[spanAttr(s, "gen_ai.conversation.id")] = true
					assert.Equal(t, tc.wantName, spanAttr(s, "gen_ai.agent.name"), name)
					if name == "chat "+defaultModel {
						assert.Equal(t, tc.content, spanAttr(s, "gen_ai.input.messages") != "", "content recorded")
					}
				}
			}
			require.Len(t, ids, 1, "one conversation id on all %d spans", n)
			for id := range ids {
				assert.NotEmpty(t, id)
				if tc.wantID != "" {
					assert.Equal(t, tc.wantID, id)
				}
			}
			if tc.stdin {
				assert.Len(t, spans["invoke_agent converse"], 2, "both prompts of the chat")
			}
			rcv.mu.Lock()
			assert.Contains(t, rcv.metrics, "gen_ai.client.operation.duration", "metrics under OTEL_EXPORTER_OTLP_ENDPOINT")
			rcv.mu.Unlock()
		})
	}
}

// TestTelemetryOff checks that without the OTLP variables, or with
// OTEL_SDK_DISABLED, or with each signal's exporter none, nothing is
// exported.
func TestTelemetryOff(t *testing.T) {
	t.Parallel()
	rcv := newOTLPReceiver(t)
	for _, env := range [][]string{
		nil,
		{"OTEL_SDK_DISABLED=true", "OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL},
		{"OTEL_TRACES_EXPORTER=none", "OTEL_METRICS_EXPORTER=none", "OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL},
		{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=", "OTEL_SERVICE_NAME=x"},
	} {
		srv := newServer(t, multiply())
		out := runBinary(t, testEnv(t, env...), nil, "-endpoint", srv.URL, "What is 6 times 7?")
		require.Equal(t, 0, out.code, out.stderr)
	}
	spans, _ := rcv.spans()
	assert.Empty(t, spans)
	rcv.mu.Lock()
	assert.Empty(t, rcv.metrics)
	rcv.mu.Unlock()
}

func TestTelemetryBadExporter(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	out := runInProcess(t, nil, "-endpoint", "http://127.0.0.1:1", "hi")
	assert.Equal(t, 2, out.code)
	assert.Contains(t, out.stderr, `OTEL_TRACES_EXPORTER "zipkin" is not supported: otlp or none`)
}

func TestTelemetryBadProtocol(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	out := runInProcess(t, nil, "-endpoint", "http://127.0.0.1:1", "hi")
	assert.Equal(t, 2, out.code)
	assert.Contains(t, out.stderr, `OTEL_EXPORTER_OTLP_PROTOCOL "http/json" is not supported`)
}

func TestCaptureContentBadValue(t *testing.T) {
	t.Setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "yes please")
	out := runInProcess(t, nil, "-endpoint", "http://127.0.0.1:1", "hi")
	assert.Equal(t, 2, out.code)
	assert.Contains(t, out.stderr, `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT "yes please": want true or false`)
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
	send, chats := spans["invoke_agent converse"], spans["chat "+defaultModel]
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
