package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestToolChoice(t *testing.T) {
	all, none := ToolChoice{Any: true, Tool: true}, ToolChoice{}
	for id, want := range map[string]ToolChoice{
		"anthropic.claude-3-5-sonnet-20240620-v1:0":                                all,
		"us.anthropic.claude-sonnet-4-5-20250929-v1:0":                             all,
		"us.anthropic.claude-sonnet-5-5":                                           none,
		"global.anthropic.claude-opus-5-5":                                         all,
		"anthropic.claude-v2:1":                                                    none,
		"us.amazon.nova-pro-v1:0":                                                  all,
		"amazon.titan-text-express-v1":                                             none,
		"mistral.mistral-large-2407-v1:0":                                          {Any: true},
		"mistral.mistral-small-2402-v1:0":                                          none,
		"us.meta.llama3-3-70b-instruct-v1:0":                                       none,
		"meta.llama4-maverick-17b-instruct-v1:0":                                   none,
		"cohere.command-r-plus-v1:0":                                               none,
		"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc": all,
	} {
		t.Run(id, func(t *testing.T) {
			assert.Equal(t, want, Parse(id).ToolChoice())
		})
	}
}

func TestThinkingForbidsForcing(t *testing.T) {
	claude := "anthropic.claude-sonnet-4-20250514-v1:0"
	for _, tc := range []struct {
		name, model, fields string
		want                bool
	}{
		{"thinking enabled", claude, `{"thinking":{"type":"enabled","budget_tokens":2048}}`, true},
		{"reasoning_config enabled", "us.anthropic.claude-3-7-sonnet-20250219-v1:0", `{"reasoning_config":{"type":"enabled","budget_tokens":1024}}`, true},
		{"adaptive", "anthropic.claude-opus-4-6-v1", `{"thinking":{"type":"adaptive"}}`, true},
		{"adaptive on Sonnet 4.6", "us.anthropic.claude-sonnet-4-6", `{"thinking":{"type":"adaptive"},"output_config":{"effort":"low"}}`, true},
		{"adaptive, not Claude", "deepseek.v3-v1:0", `{"thinking":{"type":"adaptive"}}`, false},
		{"disabled", claude, `{"thinking":{"type":"disabled"}}`, false},
		{"other fields", claude, `{"top_k":5}`, false},
		{"no fields", claude, ``, false},
		{"unnamed model", "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc", `{"thinking":{"type":"enabled"}}`, true},
		{"not Claude", "deepseek.v3-v1:0", `{"thinking":{"type":"enabled"}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Parse(tc.model).ThinkingForbidsForcing([]byte(tc.fields)))
		})
	}
}

func TestExclusiveSampling(t *testing.T) {
	for id, want := range map[string]bool{
		"us.anthropic.claude-sonnet-4-5-20250929-v1:0": true,
		"anthropic.claude-haiku-4-5-20251001-v1:0":     true,
		"anthropic.claude-opus-4-5-20251101-v1:0":      true,
		"anthropic.claude-opus-4-6-v1":                 true,
		"anthropic.claude-sonnet-4-6":                  true,
		"anthropic.claude-sonnet-5":                    true,
		"anthropic.claude-sonnet-4-20250514-v1:0":      false,
		"anthropic.claude-opus-4-1-20250805-v1:0":      false,
		"anthropic.claude-3-7-sonnet-20250219-v1:0":    false,
		"us.amazon.nova-pro-v1:0":                      false,
	} {
		t.Run(id, func(t *testing.T) {
			assert.Equal(t, want, Parse(id).ExclusiveSampling())
		})
	}
}

func TestBudgetThinking(t *testing.T) {
	sonnet := Parse("us.anthropic.claude-sonnet-4-20250514-v1:0")
	budget := func(n int) *int { return &n }
	tests := []struct {
		name   string
		m      Model
		fields string
		want   Thinking
		on     bool
	}{
		{name: "enabled", m: sonnet, fields: `{"thinking":{"type":"enabled","budget_tokens":2048}}`, want: Thinking{Budget: budget(2048)}, on: true},
		{name: "reasoning_config", m: sonnet, fields: `{"reasoning_config":{"type":"enabled","budget_tokens":1024}}`, want: Thinking{Budget: budget(1024)}, on: true},
		{name: "no budget, top_k and interleaved", m: sonnet, fields: `{"thinking":{"type":"enabled"},"top_k":5,"anthropic_beta":["interleaved-thinking-2025-05-14"]}`,
			want: Thinking{TopK: true, Interleaved: true}, on: true},
		{name: "adaptive", m: sonnet, fields: `{"thinking":{"type":"adaptive"}}`},
		{name: "disabled", m: sonnet, fields: `{"thinking":{"type":"disabled"}}`},
		{name: "none", m: sonnet, fields: ``},
		{name: "not claude", m: Parse("us.amazon.nova-pro-v1:0"), fields: `{"thinking":{"type":"enabled","budget_tokens":2048}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, on := tt.m.BudgetThinking([]byte(tt.fields))
			assert.Equal(t, tt.on, on)
			assert.Equal(t, tt.want, got)
		})
	}
}
