package mcptools_test

import (
	"context"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/mcptools"
)

// metaSeen records the _meta of the requests a server receives, by method.
type metaSeen struct {
	mu   sync.Mutex
	meta map[string]map[string]any
}

func (m *metaSeen) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		m.mu.Lock()
		m.meta[method] = req.GetParams().GetMeta()
		m.mu.Unlock()
		return next(ctx, method, req)
	}
}

func (m *metaSeen) of(method string) map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.meta[method]
}

// TestTraceContextInMeta: the listing and each call carry the W3C
// traceparent of the caller's span in _meta, so that the server's spans
// join the trace; without a span they carry none.
func TestTraceContextInMeta(t *testing.T) {
	seen := &metaSeen{meta: map[string]map[string]any{}}
	srv := newTestServer(newFixture(), nil)
	srv.AddReceivingMiddleware(seen.middleware)
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()

	ctx, connecting := tp.Tracer("test").Start(context.Background(), "connect")
	reg := new(tools.Registry)
	b, err := mcptools.Connect(ctx, reg, inMemory(t, "s", srv))
	require.NoError(t, err)
	defer b.Close()
	connecting.End()
	assert.Equal(t, traceparent(connecting), seen.of("tools/list")["traceparent"])

	ctx, calling := tp.Tracer("test").Start(context.Background(), "call")
	tool, _ := reg.Lookup("s__echo")
	_, err = tool.Call(ctx, []byte(`{"text":"hi"}`))
	require.NoError(t, err)
	calling.End()
	assert.Equal(t, traceparent(calling), seen.of("tools/call")["traceparent"])
	assert.NotContains(t, seen.of("tools/call"), "tracestate", "the span has no trace state")

	_, err = tool.Call(context.Background(), []byte(`{"text":"hi"}`))
	require.NoError(t, err)
	assert.NotContains(t, seen.of("tools/call"), "traceparent", "no span, no trace context")
}

// traceparent is the W3C traceparent of span, sampled.
func traceparent(span trace.Span) string {
	sc := span.SpanContext()
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
}
