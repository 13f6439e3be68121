package models

import "strings"

// windowTable is the context window, in tokens, of the model families
// whose window is published, matched by prefix of the model name, longest
// first:
//
//	Claude Opus 4.7, 4.8, 5, 5.5; Sonnet 4.6, 5, 5.5;     1,000,000
//	  Fable 5, 5.1
//	  (Bedrock's model cards of Opus 4.7 and Opus 5.5, docs.aws.amazon.com/
//	  bedrock/latest/userguide/model-card-anthropic-claude-opus-4-7.html and
//	  -opus-5-5.html; for the others Anthropic's model overviews, read on
//	  2026-12-04)
//	Claude 3, 3.5, 3.7, 4, 4.1, 4.5, Opus 4.6, Haiku 4.5   200,000
//	  (Anthropic's model overviews, platform.claude.com/docs/models/*/overview;
//	  the 1M window of Sonnet 4 and 4.5 is a beta the request must ask for;
//	  no page read gives Opus 4.6 on Bedrock 1M, so it keeps the lower figure)
//	Claude 2.1                                             200,000
//	Claude 2, Instant                                      100,000
//	Amazon Nova Micro                                      128,000
//	Amazon Nova Lite, Pro                                  300,000
//	Amazon Nova Premier, Nova 2 Lite                     1,000,000
//	  (the Amazon Nova user guide, docs.aws.amazon.com/nova/latest/userguide,
//	  "Amazon Nova models", and the Bedrock model cards)
//	Meta Llama 3.1, 3.2, 3.3, 4                            128,000
//	Mistral Large 2 (2407)                                 128,000
//	  (the Bedrock model cards, docs.aws.amazon.com/bedrock/latest/userguide/model-cards.html)
//
// A model of none of these families has no known window (0).
var windowTable = []struct {
	provider, prefix string
	tokens           int
}{
	{"anthropic", "claude-v2:1", 200_000},
	{"anthropic", "claude-v2", 100_000},
	{"anthropic", "claude-instant", 100_000},
	{"anthropic", "claude-opus-4-7", 1_000_000},
	{"anthropic", "claude-opus-4-8", 1_000_000},
	{"anthropic", "claude-opus-5", 1_000_000}, // and 5.5
	{"anthropic", "claude-sonnet-4-6", 1_000_000},
	{"anthropic", "claude-sonnet-5", 1_000_000}, // and 5.5
	{"anthropic", "claude-fable-5", 1_000_000},  // and 5.1
	{"anthropic", "claude-", 200_000},
	{"amazon", "nova-micro", 128_000},
	{"amazon", "nova-lite", 300_000},
	{"amazon", "nova-pro", 300_000},
	{"amazon", "nova-premier", 1_000_000},
	{"amazon", "nova-2-lite", 1_000_000},
	{"meta", "llama3-1", 128_000},
	{"meta", "llama3-2", 128_000},
	{"meta", "llama3-3", 128_000},
	{"meta", "llama4", 128_000},
	{"mistral", "mistral-large-2407", 128_000},
}

// ContextWindow returns the model's context window in tokens, or 0 when it
// is not known.
func (m Model) ContextWindow() int {
	for _, e := range windowTable {
		if m.Provider == e.provider && strings.HasPrefix(m.Name, e.prefix) {
			return e.tokens
		}
	}
	return 0
}
