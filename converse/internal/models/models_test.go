package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParse(t *testing.T) {
	tests := []struct {
		id   string
		want Model
	}{
		{"anthropic.claude-3-5-sonnet-20240620-v1:0", Model{"anthropic", "claude-3-5-sonnet-20240620-v1:0"}},
		{"us.anthropic.claude-3-5-haiku-20241022-v1:0", Model{"anthropic", "claude-3-5-haiku-20241022-v1:0"}},
		{"us-gov.anthropic.claude-3-haiku-20240307-v1:0", Model{"anthropic", "claude-3-haiku-20240307-v1:0"}},
		{"eu.meta.llama3-2-3b-instruct-v1:0", Model{"meta", "llama3-2-3b-instruct-v1:0"}},
		{"apac.amazon.nova-lite-v1:0", Model{"amazon", "nova-lite-v1:0"}},
		{"global.anthropic.claude-sonnet-4-20250514-v1:0", Model{"anthropic", "claude-sonnet-4-20250514-v1:0"}},
		{"jp.anthropic.claude-sonnet-4-5-20250929-v1:0", Model{"anthropic", "claude-sonnet-4-5-20250929-v1:0"}},
		{"au.anthropic.claude-haiku-4-5-20251001-v1:0", Model{"anthropic", "claude-haiku-4-5-20251001-v1:0"}},
		{"ca.amazon.nova-pro-v1:0", Model{"amazon", "nova-pro-v1:0"}},
		{"arn:aws:bedrock:us-east-1::foundation-model/mistral.mistral-large-2402-v1:0", Model{"mistral", "mistral-large-2402-v1:0"}},
		{"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.meta.llama3-1-8b-instruct-v1:0", Model{"meta", "llama3-1-8b-instruct-v1:0"}},
		{"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123", Model{}},
		{"arn:aws:bedrock:us-east-1", Model{}},
		{"", Model{}},
		{"nodots", Model{}},
		{"Anthropic.Claude-3-Opus-20240229-v1:0", Model{"anthropic", "claude-3-opus-20240229-v1:0"}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			assert.Equal(t, tt.want, Parse(tt.id))
		})
	}
}

func TestCapabilities(t *testing.T) {
	tests := []struct {
		id                             string
		status, rejectsText, streaming bool
		rejectsReasoning               bool
	}{
		{"anthropic.claude-3-5-sonnet-20240620-v1:0", true, false, true, false},
		{"anthropic.claude-3-haiku-20240307-v1:0", true, false, true, false},
		{"us.anthropic.claude-sonnet-4-20250514-v1:0", true, false, true, false},
		{"anthropic.claude-opus-4-1-20250805-v1:0", true, false, true, false},
		{"anthropic.claude-haiku-4-5-20251001-v1:0", true, false, true, false},
		{"anthropic.claude-lyric-7-20300101-v1:0", true, false, true, false},
		{"anthropic.claude-v2:1", false, false, true, false},
		{"anthropic.claude-instant-v1", false, false, true, false},
		{"amazon.nova-pro-v1:0", true, false, true, false},
		{"amazon.titan-text-premier-v1:0", false, false, true, false},
		{"meta.llama3-1-70b-instruct-v1:0", false, true, false, false},
		{"mistral.mistral-large-2407-v1:0", false, true, false, false},
		{"writer.palmyra-x5-v1:0", false, true, false, false},
		{"deepseek.r1-v1:0", false, false, false, true},
		{"deepseek.v3-v1:0", false, false, true, true},
		{"cohere.command-r-plus-v1:0", false, false, true, false},
		{"cohere.command-text-v14", false, false, false, false},
		{"cohere.command-light-text-v14", false, false, false, false},
		{"ai21.jamba-1-5-large-v1:0", false, false, true, false},
		{"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123", false, false, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			m := Parse(tt.id)
			assert.Equal(t, tt.status, m.SupportsToolStatus(), "SupportsToolStatus()")
			assert.Equal(t, tt.rejectsText, m.RejectsTextWithToolResults(), "RejectsTextWithToolResults()")
			assert.Equal(t, tt.streaming, m.SupportsStreamingToolUse(), "SupportsStreamingToolUse()")
			assert.Equal(t, tt.rejectsReasoning, m.RejectsReasoningHistory(), "RejectsReasoningHistory()")
		})
	}
}

func TestModernClaude(t *testing.T) {
	for name, want := range map[string]bool{
		"claude-3-haiku-20240307-v1:0":    true,
		"claude-3-5-sonnet-20240620-v1:0": true,
		"claude-sonnet-4-20250514-v1:0":   true,
		"claude-opus-4-1-20250805-v1:0":   true,
		"claude-lyric-7-20300101-v1:0":    true,
		"claude-v2:1":                     false,
		"claude-instant-v1":               false,
		"claude-2-1":                      false,
		"claude-":                         false,
		"claude-sonnet":                   false,
		"claude-sonnet-":                  false,
		"claude--4":                       false,
		"claude-Sonnet-4":                 false,
		"llama3-1-70b":                    false,
		"xclaude-3":                       false,
	} {
		assert.Equal(t, want, modernClaude(name), name)
	}
}
