// Package models knows what Bedrock model IDs say about a model family's
// Converse quirks: whether a toolResult may carry a status, whether text may
// sit beside tool results, whether tools work while streaming.
package models

import (
	"regexp"
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

// claudeModern matches Claude families from Claude 3 on: claude-3*, and the
// later naming claude-<family>-<n> (claude-sonnet-4, claude-opus-4-1, ...).
var claudeModern = regexp.MustCompile(`^claude-(3|[a-z]+-[0-9])`)

// SupportsToolStatus reports whether the model accepts the status field of a
// toolResult block: Anthropic Claude 3 and later, and Amazon Nova.
func (m Model) SupportsToolStatus() bool {
	switch m.Provider {
	case "anthropic":
		return claudeModern.MatchString(m.Name)
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
