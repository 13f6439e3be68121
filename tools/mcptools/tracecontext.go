package mcptools

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
)

// traceMeta is the W3C trace context of ctx's span ("traceparent", and
// "tracestate" when it has one) for a request's _meta, so that the server's
// spans join the caller's trace. It is nil when ctx has no valid span. It is
// W3C's format whatever the global propagator, as the keys say.
func traceMeta(ctx context.Context) mcp.Meta {
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	if len(carrier) == 0 {
		return nil
	}
	meta := mcp.Meta{}
	for k, v := range carrier {
		meta[k] = v
	}
	return meta
}
