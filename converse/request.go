package converse

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// request is the one place a turn's request is built, for Converse and
// (through streamRequest) ConverseStream alike, so that an option set once
// reaches both.
func (c *Conversation) request(history []types.Message, cfg *types.ToolConfiguration) *bedrockruntime.ConverseInput {
	o := &c.opts
	in := &bedrockruntime.ConverseInput{
		ModelId:                           aws.String(c.modelID),
		Messages:                          history,
		System:                            c.shape.system(o.System),
		InferenceConfig:                   o.InferenceConfig,
		AdditionalModelRequestFields:      o.AdditionalModelRequestFields,
		AdditionalModelResponseFieldPaths: o.AdditionalModelResponseFieldPaths,
		GuardrailConfig:                   o.GuardrailConfig,
		OutputConfig:                      c.shape.outputConfig(o.OutputConfig),
		PerformanceConfig:                 o.PerformanceConfig,
		PromptVariables:                   o.PromptVariables,
		RequestMetadata:                   o.RequestMetadata,
		ServiceTier:                       o.ServiceTier,
		ToolConfig:                        cfg,
	}
	if o.PromptCache {
		placeCachePoints(c.model, o.CacheTTL, in)
	}
	return in
}

// streamRequest is in as a ConverseStream request: every field copied, the
// guardrail configuration in its stream form with mode as its processing
// mode (empty: Bedrock's default, synchronous).
func streamRequest(in *bedrockruntime.ConverseInput, mode types.GuardrailStreamProcessingMode) *bedrockruntime.ConverseStreamInput {
	out := &bedrockruntime.ConverseStreamInput{
		ModelId:                           in.ModelId,
		Messages:                          in.Messages,
		System:                            in.System,
		InferenceConfig:                   in.InferenceConfig,
		AdditionalModelRequestFields:      in.AdditionalModelRequestFields,
		AdditionalModelResponseFieldPaths: in.AdditionalModelResponseFieldPaths,
		OutputConfig:                      in.OutputConfig,
		PerformanceConfig:                 in.PerformanceConfig,
		PromptVariables:                   in.PromptVariables,
		RequestMetadata:                   in.RequestMetadata,
		ServiceTier:                       in.ServiceTier,
		ToolConfig:                        in.ToolConfig,
	}
	if g := in.GuardrailConfig; g != nil {
		out.GuardrailConfig = &types.GuardrailStreamConfiguration{
			GuardrailIdentifier:  g.GuardrailIdentifier,
			GuardrailVersion:     g.GuardrailVersion,
			Trace:                g.Trace,
			StreamProcessingMode: mode,
		}
	}
	return out
}
