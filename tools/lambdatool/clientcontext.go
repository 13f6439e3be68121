package lambdatool

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"github.com/tooluse/bedrock/tools"
)

// The keys of ClientContext.custom that the package sets.
const (
	// KeyToolUseID holds the toolUseId of the call, as the model gave it.
	KeyToolUseID = "toolUseId"
	// KeyToolName holds the name of the tool.
	KeyToolName = "toolName"
	// KeyAgentCoreToolName holds the name of the tool too, under the key an
	// Amazon Bedrock AgentCore Gateway uses, so that a function written for a
	// gateway target finds it.
	KeyAgentCoreToolName = "bedrockAgentCoreToolName"
)

// MaxClientContext is the size Lambda allows the ClientContext of an
// invocation: 3,583 bytes, base64-encoded.
const MaxClientContext = 3583

// clientContext is the base64 JSON of the call's ClientContext: the call's
// id, the tool's name and the trace context, if any, leaving out trace
// entries that would not fit.
func (inv *invoker) clientContext(ctx context.Context) string {
	custom := map[string]string{
		KeyToolUseID:         tools.CallID(ctx),
		KeyToolName:          inv.name,
		KeyAgentCoreToolName: inv.name,
	}
	trace := map[string]string{}
	inv.propagate(ctx, trace)
	// Sorted, so that the entries kept do not depend on map order;
	// "traceparent" sorts before "tracestate" and matters more.
	for _, k := range slices.Sorted(maps.Keys(trace)) {
		if _, taken := custom[k]; taken {
			continue
		}
		custom[k] = trace[k]
		if len(encodeClientContext(custom)) > MaxClientContext {
			delete(custom, k)
			inv.logger.Warn("lambdatool: a trace context entry was left out of the client context, over Lambda's limit",
				"tool", inv.name, "key", k, "limit", MaxClientContext)
		}
	}
	return encodeClientContext(custom)
}

// propagate adds the trace context of ctx to carrier, with
// Function.TraceContext or else OpenTelemetry's global propagator.
func (inv *invoker) propagate(ctx context.Context, carrier map[string]string) {
	if inv.fn.TraceContext != nil {
		inv.fn.TraceContext(ctx, carrier)
		return
	}
	otel.GetTextMapPropagator().Inject(ctx, propagation.MapCarrier(carrier))
}

// encodeClientContext encodes a ClientContext holding custom as Lambda wants
// it.
func encodeClientContext(custom map[string]string) string {
	b, _ := json.Marshal(struct {
		Custom map[string]string `json:"custom"`
	}{custom}) // a map of strings always encodes
	return base64.StdEncoding.EncodeToString(b)
}
