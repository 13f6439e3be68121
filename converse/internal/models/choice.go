package models

import (
	"encoding/json"
	"strings"
)

// ToolChoice is which forcing toolChoice values a model takes; every
// model with tool use takes auto, the default.
type ToolChoice struct {
	Any  bool // toolChoice any: the model must call some tool
	Tool bool // toolChoice tool: the model must call the named tool
}

// ToolChoice returns the toolChoice values the model takes. The sources are
// three. The API reference's ToolChoice says any is "only supported by
// Anthropic Claude 3 models and by Mistral AI Mistral Large", and tool "only
// supported by Anthropic Claude 3"
// (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolChoice.html).
// The Amazon Nova user guide's "Choosing a tool" gives tool, any and auto.
// The table of langchain-aws agrees
// (libs/aws/langchain_aws/chat_models/bedrock_converse.py,
// supports_tool_choice_values):
//
//	model                       any  tool
//	Claude Sonnet 5.5           no   no
//	Claude 3 and later          yes  yes
//	Amazon Nova                 yes  yes
//	Mistral Large               yes  no
//	any other model (Llama ...) no   no
//
// The others answer a forcing choice with "This model doesn't support the
// toolConfig.toolChoice.any field" (Llama 3.3: run-llama/llama_index
// issue 19886, strands-agents issue 1241). Claude Sonnet 5.5 takes
// neither: "Forced tool use returns an error" (Anthropic's model overview
// of Sonnet 5.5, its breaking changes). An ID that names no model (an
// application inference profile ARN) is given both: Bedrock decides.
func (m Model) ToolChoice() ToolChoice {
	switch {
	case m == Model{}:
		return ToolChoice{Any: true, Tool: true}
	case m.Provider == "anthropic" && strings.HasPrefix(m.Name, "claude-sonnet-5-5"):
		return ToolChoice{}
	case m.Provider == "anthropic" && modernClaude(m.Name),
		m.Provider == "amazon" && strings.HasPrefix(m.Name, "nova"):
		return ToolChoice{Any: true, Tool: true}
	case m.Provider == "mistral" && strings.HasPrefix(m.Name, "mistral-large"):
		return ToolChoice{Any: true}
	}
	return ToolChoice{}
}

// ThinkingForbidsForcing reports whether fields, the JSON of a request's
// additionalModelRequestFields, turn on thinking on a Claude model (or one
// the ID does not name). Extended thinking with a budget is {"thinking":
// {"type": "enabled"}} or Claude 3.7 Sonnet's {"reasoning_config":
// {"type": "enabled"}}. Adaptive thinking is {"thinking": {"type":
// "adaptive"}}.
//
// Anthropic then rejects a toolChoice that forces tool use, any or tool:
// "Thinking may not be enabled when tool_choice forces tool use".
// Anthropic's extended thinking guide allows only auto and none with
// thinking. On Bedrock, langchain-aws pull 640 and issue 925 and
// pydantic-ai issue 3092 report it. For adaptive thinking, langchain-aws
// (pull 1151) and can1357/oh-my-pi issue 341 (Claude Sonnet 4.6 on
// Bedrock) report the same. langchain-aws pull 1141 says Claude Opus 4.8
// and Claude 5 take a forced choice beside it. That is not relied on here:
// without forcing, the final tool of a structured Send is offered and
// still answers.
func (m Model) ThinkingForbidsForcing(fields []byte) bool {
	if _, on := m.BudgetThinking(fields); on {
		return true
	}
	if m.Provider != "anthropic" && m != (Model{}) {
		return false
	}
	var f struct {
		Thinking struct {
			Type string `json:"type"`
		} `json:"thinking"`
	}
	return json.Unmarshal(fields, &f) == nil && f.Thinking.Type == "adaptive"
}

// exclusiveSampling lists the Claude models that reject temperature and
// topP together ("`temperature` and `top_p` cannot both be specified for
// this model. Please use only one."). Anthropic's migration guide for
// Claude 4.5 says so. On Bedrock, BerriAI/litellm issue 15070 reports it
// for Sonnet 4.5 and aws-samples/bedrock-access-gateway issue 191 for
// Haiku 4.5. That gateway's TEMPERATURE_TOPP_CONFLICT_MODELS lists Sonnet
// 4.5, Haiku 4.5 and Opus 4.5; its pull 238 adds Sonnet 4.6.
// skydiscover-ai/skydiscover issue 15 reports Sonnet 4.6.
// Opus 4.6 and the Claude models of generation 5 on are taken to follow
// their family.
var exclusiveSampling = []string{"claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-5", "claude-opus-4-6", "claude-sonnet-4-6"}

// ExclusiveSampling reports whether the model rejects a request setting
// both temperature and topP.
func (m Model) ExclusiveSampling() bool {
	if m.Provider != "anthropic" {
		return false
	}
	for _, p := range exclusiveSampling {
		if strings.HasPrefix(m.Name, p) {
			return true
		}
	}
	_, gen, _ := strings.Cut(strings.TrimPrefix(m.Name, "claude-"), "-")
	return laterClaude(m.Name) && gen[0] >= '5'
}
