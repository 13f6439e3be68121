package models

import "strings"

// nativeStructured lists the models whose Converse takes a JSON schema for
// the answer's text (outputConfig.textFormat, type json_schema), matched by
// prefix of the model name. From the user guide "Get validated JSON results
// from models"
// (docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html) and
// "Structured outputs" for Claude
// (docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-structured-outputs.html):
//
//	model              path
//	Claude Sonnet 4.5  native (outputConfig.textFormat)
//	Claude Haiku 4.5   native
//	Claude Opus 4.5    native
//	Claude Opus 4.6    native
//	Claude Sonnet 5.5  native
//	any other model    forced tool (toolChoice any, a final tool)
//
// For Claude Sonnet 5.5 the second page says only that structured outputs
// cover the Sonnet, Opus, Haiku, Fable and Mythos families, support
// varying by model; its per-model table could not be read. It is here
// because it rejects forced tool use (see ToolChoice), so the forced tool
// cannot serve it. The Vercel AI SDK (@ai-sdk/anthropic 2.0.112) also
// enables native structured output for the Claude 5 models on Bedrock.
//
// The guide also names some open-weight models (select Qwen, DeepSeek,
// Mistral, Gemma, Nemotron, MiniMax and Kimi versions) without their IDs;
// until it does, they take the forced tool, which every tool-capable model
// supports.
var nativeStructured = []struct{ provider, prefix string }{
	{"anthropic", "claude-sonnet-4-5"},
	{"anthropic", "claude-haiku-4-5"},
	{"anthropic", "claude-opus-4-5"},
	{"anthropic", "claude-opus-4-6"},
	{"anthropic", "claude-sonnet-5-5"},
}

// NativeStructuredOutput reports whether the model's Converse constrains
// its answer to a JSON schema given in outputConfig.textFormat. The others
// give a structured answer by calling a final tool.
func (m Model) NativeStructuredOutput() bool {
	for _, e := range nativeStructured {
		if m.Provider == e.provider && strings.HasPrefix(m.Name, e.prefix) {
			return true
		}
	}
	return false
}
