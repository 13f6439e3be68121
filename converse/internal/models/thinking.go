package models

import (
	"bytes"
	"encoding/json"
)

// Thinking is Claude's extended thinking with a budget, as a request's
// additionalModelRequestFields turn it on.
type Thinking struct {
	Budget      *int // budget_tokens, nil when missing
	Interleaved bool // the interleaved-thinking beta, under which the budget may exceed max tokens
	TopK        bool // whether top_k is set beside it
}

// interleavedBeta is the anthropic_beta flag of interleaved thinking,
// under which budget_tokens may exceed max_tokens (Anthropic's extended
// thinking guide, "Interleaved thinking").
const interleavedBeta = "interleaved-thinking-"

// BudgetThinking reads fields, the JSON of a request's
// additionalModelRequestFields. It reports whether they turn on extended
// thinking with a budget on a Claude model (or one the ID does not name):
// {"thinking": {"type": "enabled"}}, or Claude 3.7 Sonnet's
// {"reasoning_config": {"type": "enabled"}}. Adaptive thinking ({"type":
// "adaptive"}) has no budget and is not reported.
func (m Model) BudgetThinking(fields []byte) (Thinking, bool) {
	if m.Provider != "anthropic" && m != (Model{}) {
		return Thinking{}, false
	}
	type config struct {
		Type   string `json:"type"`
		Budget *int   `json:"budget_tokens"`
	}
	var f struct {
		Thinking        config          `json:"thinking"`
		ReasoningConfig config          `json:"reasoning_config"`
		TopK            json.RawMessage `json:"top_k"`
		Beta            json.RawMessage `json:"anthropic_beta"` // a list of flags; read leniently

	}
	if json.Unmarshal(fields, &f) != nil {
		return Thinking{}, false
	}
	c := f.Thinking
	if c.Type != "enabled" {
		c = f.ReasoningConfig
	}
	if c.Type != "enabled" {
		return Thinking{}, false
	}
	return Thinking{
		Budget:      c.Budget,
		Interleaved: bytes.Contains(f.Beta, []byte(interleavedBeta)),
		TopK:        len(f.TopK) > 0 && string(f.TopK) != "null",
	}, true
}
