// Package models knows what Bedrock model IDs say about a model family's
// Converse quirks: whether a toolResult may carry a status, whether text may
// sit beside tool results, whether tools work while streaming.
//
// The rules the loop keeps, and bedrocktest enforces, from these tables:
//
//   - A toolConfig accompanies every request whose history holds tool
//     blocks.
//   - Error results are never empty.
//   - Tool results never share a user message with text (Llama, Mistral
//     and Writer reject that).
//   - Echoed toolUse blocks carry only toolUseId, name and input.
//   - Reasoning blocks are echoed unchanged, except to DeepSeek, which
//     rejects them. Its replies' reasoning is not kept.
//   - The status field is sent only to model families documented to
//     accept it (converse.ToolOptions.Status).
//   - A forcing Options.ToolChoice (any, or a named tool) that Bedrock
//     would reject is converse.ErrToolChoice before any model call. Only
//     Claude 3 and later and Amazon Nova take both; Mistral Large takes
//     any. Claude takes neither with extended thinking enabled ("thinking"
//     or "reasoning_config" of type enabled). Adaptive thinking takes
//     them. So a structured Send under extended thinking does not force
//     its final tool either (converse.Structured).
//
// Bedrock also wants temperature and topP within 0 to 1. It rejects the
// two together on Claude Sonnet 4.5 and 4.6, Haiku 4.5 and Opus 4.5 and
// 4.6. It wants maxTokens of at least 1. Beside Claude's extended
// thinking, it wants a budget_tokens from 1024 and below maxTokens,
// temperature 1 or unset, topP from 0.95 or unset and no top_k. The loop
// passes Options.Request.InferenceConfig and
// Options.Request.AdditionalModelRequestFields as they are. bedrocktest
// answers such a request with Bedrock's error. A strict tool's input
// schema and a structured answer's schema on the native path are sent
// with every object schema closed ("additionalProperties": false where
// left out), as Bedrock requires.

package models

import (
	"slices"
	"strings"
)

// Model is a Bedrock model as named by its ID, with any inference-profile
// prefix or ARN stripped. An ID that names no model (an application
// inference profile ARN, or something unparseable) gives the zero Model.
type Model struct {
	Provider string // e.g. "anthropic", "meta", "amazon"
	Name     string // e.g. "claude-3-5-sonnet-20240620-v1:0"
}

// regionPrefixes are the geography prefixes of cross-region inference
// profile IDs, such as "us.anthropic.claude-3-5-haiku-20241022-v1:0".
var regionPrefixes = []string{"us-gov.", "us.", "eu.", "apac.", "global.", "jp.", "au.", "ca."}

// Parse reads a model ID, an inference profile ID or a foundation-model or
// inference-profile ARN.
func Parse(modelID string) Model {
	id := strings.ToLower(strings.TrimSpace(modelID))
	if strings.HasPrefix(id, "arn:") {
		// arn:partition:bedrock:region:account:resource-type/resource-id
		parts := strings.SplitN(id, ":", 6)
		if len(parts) < 6 {
			return Model{}
		}
		kind, rest, ok := strings.Cut(parts[5], "/")
		if !ok || (kind != "foundation-model" && kind != "inference-profile") {
			return Model{}
		}
		id = rest
	}
	for _, p := range regionPrefixes {
		if strings.HasPrefix(id, p) {
			id = id[len(p):]
			break
		}
	}
	provider, name, ok := strings.Cut(id, ".")
	if !ok || provider == "" || name == "" {
		return Model{}
	}
	return Model{Provider: provider, Name: name}
}

// knownProviders are the providers whose models' Converse quirks the
// tables here know.
var knownProviders = []string{"anthropic", "amazon", "meta", "mistral", "cohere", "deepseek", "writer"}

// Known reports whether the model is of a provider the tables know. For
// another model, or an ID that names none (an application inference
// profile), every table gives its default.
func (m Model) Known() bool {
	return slices.Contains(knownProviders, m.Provider)
}

// modernClaude reports whether name is of a Claude family from Claude 3
// on: claude-3*, and the later naming claude-<family>-<n> (claude-sonnet-4,
// claude-opus-4-1, ...).
func modernClaude(name string) bool {
	rest, ok := strings.CutPrefix(name, "claude-")
	if !ok {
		return false
	}
	if strings.HasPrefix(rest, "3") {
		return true
	}
	family := strings.IndexFunc(rest, func(r rune) bool { return r < 'a' || r > 'z' })
	return family > 0 && len(rest) > family+1 && rest[family] == '-' && rest[family+1] >= '0' && rest[family+1] <= '9'
}

// SupportsToolStatus reports whether the model accepts the status field of a
// toolResult block: Anthropic Claude 3 and later, and Amazon Nova.
func (m Model) SupportsToolStatus() bool {
	switch m.Provider {
	case "anthropic":
		return modernClaude(m.Name)
	case "amazon":
		return strings.HasPrefix(m.Name, "nova")
	}
	return false
}

// RejectsTextWithToolResults reports whether the model refuses a user
// message mixing toolResult blocks with other blocks.
func (m Model) RejectsTextWithToolResults() bool {
	switch m.Provider {
	case "meta", "mistral", "writer":
		return true
	}
	return false
}

// RejectsReasoningHistory reports whether the model refuses reasoning
// blocks in the messages of a request, its own earlier replies' included:
// DeepSeek on Bedrock answers "User messages cannot contain reasoning
// content. Please remove the reasoning content and try again."
func (m Model) RejectsReasoningHistory() bool {
	return m.Provider == "deepseek"
}

// SupportsStreamingToolUse reports whether ConverseStream accepts a
// toolConfig for the model. Unknown models are assumed to support it.
func (m Model) SupportsStreamingToolUse() bool {
	switch m.Provider {
	case "meta", "mistral", "writer":
		return false
	case "deepseek":
		return !strings.HasPrefix(m.Name, "r1")
	case "cohere":
		return !strings.HasPrefix(m.Name, "command-text") && !strings.HasPrefix(m.Name, "command-light")
	}
	return true
}
