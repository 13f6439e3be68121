package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestQuotaTokens: input and cache writes count once. Output counts at
// the model's burndown: 5 for the Claude models of the table, by any form
// of their IDs, 1 for the rest. Cache reads count not at all (QuotaTokens
// takes none).
func TestQuotaTokens(t *testing.T) {
	tests := []struct {
		id       string
		burndown int
	}{
		{"anthropic.claude-3-7-sonnet-20250219-v1:0", 5},
		{"us.anthropic.claude-sonnet-4-20250514-v1:0", 5},
		{"arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-opus-4-20250514-v1:0", 5},
		{"global.anthropic.claude-sonnet-4-5-20250929-v1:0", 5},
		{"us.anthropic.claude-opus-4-1-20250805-v1:0", 5},
		{"global.anthropic.claude-opus-4-5-20251101-v1:0", 5},
		{"global.anthropic.claude-opus-4-6-v1", 5},
		{"eu.anthropic.claude-sonnet-4-6", 5},
		{"anthropic.claude-haiku-4-5-20251001-v1:0", 5},
		{"anthropic.claude-3-haiku-20240307-v1:0", 1},
		{"anthropic.claude-3-5-haiku-20241022-v1:0", 1},
		{"anthropic.claude-3-5-sonnet-20241022-v2:0", 1},
		{"global.anthropic.claude-opus-4-7", 1}, // newer than the table: unknown
		{"amazon.nova-pro-v1:0", 1},
		{"meta.llama3-70b-instruct-v1:0", 1},
		{"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc", 1},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			m := Parse(tt.id)
			assert.Equal(t, tt.burndown, m.OutputBurndown())
			assert.Equal(t, 1000+50+100*tt.burndown, m.QuotaTokens(1000, 50, 100))
		})
	}
}
