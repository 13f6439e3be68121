package converse

import (
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// Response is what a model call returned beside its message, the same for
// Converse and ConverseStream; a Result holds the last call's, a TurnEnd
// event each call's. Any field may be nil.
type Response struct {
	// Trace holds the guardrail's assessment (with Options.Request.GuardrailConfig
	// and its Trace enabled) and the prompt router's choice.
	Trace *types.ConverseTrace
	// Metrics holds the call's latency, as Bedrock measured it.
	Metrics *types.ConverseMetrics
	// ServiceTier and PerformanceConfig are those that served the call.
	ServiceTier       *types.ServiceTier
	PerformanceConfig *types.PerformanceConfiguration
	// AdditionalModelResponseFields are the fields that
	// Options.Request.AdditionalModelResponseFieldPaths asked for.
	AdditionalModelResponseFields document.Interface
}

func responseOf(out *bedrockruntime.ConverseOutput) Response {
	return Response{
		Trace:                         out.Trace,
		Metrics:                       out.Metrics,
		ServiceTier:                   out.ServiceTier,
		PerformanceConfig:             out.PerformanceConfig,
		AdditionalModelResponseFields: out.AdditionalModelResponseFields,
	}
}

// addMetadata adds a ConverseStream metadata event to r.
func (r *Response) addMetadata(m types.ConverseStreamMetadataEvent) {
	r.ServiceTier, r.PerformanceConfig = m.ServiceTier, m.PerformanceConfig
	if m.Metrics != nil {
		r.Metrics = &types.ConverseMetrics{LatencyMs: m.Metrics.LatencyMs}
	}
	if m.Trace != nil {
		r.Trace = &types.ConverseTrace{Guardrail: m.Trace.Guardrail, PromptRouter: m.Trace.PromptRouter}
	}
}
