package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestContextWindow(t *testing.T) {
	tests := []struct {
		id   string
		want int
	}{
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", 200_000},
		{"anthropic.claude-3-haiku-20240307-v1:0", 200_000},
		{"arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-opus-4-1-20250805-v1:0", 200_000},
		{"anthropic.claude-v2:1", 200_000},
		{"global.anthropic.claude-opus-4-7", 1_000_000},
		{"us.anthropic.claude-opus-4-8", 1_000_000},
		{"us.anthropic.claude-opus-5", 1_000_000},
		{"eu.anthropic.claude-opus-5-5", 1_000_000},
		{"global.anthropic.claude-sonnet-4-6", 1_000_000},
		{"us.anthropic.claude-sonnet-5", 1_000_000},
		{"us.anthropic.claude-sonnet-5-5", 1_000_000},
		{"global.anthropic.claude-fable-5-1", 1_000_000},
		{"global.anthropic.claude-opus-4-6-v1", 200_000},
		{"global.anthropic.claude-haiku-4-5-20251001-v1:0", 200_000},
		{"anthropic.claude-v2", 100_000},
		{"anthropic.claude-instant-v1", 100_000},
		{"amazon.nova-micro-v1:0", 128_000},
		{"us.amazon.nova-pro-v1:0", 300_000},
		{"amazon.nova-premier-v1:0", 1_000_000},
		{"global.amazon.nova-2-lite-v1:0", 1_000_000},
		{"meta.llama3-1-70b-instruct-v1:0", 128_000},
		{"meta.llama3-8b-instruct-v1:0", 0}, // Llama 3's 8K is not in the table
		{"mistral.mistral-large-2407-v1:0", 128_000},
		{"cohere.command-r-plus-v1:0", 0},
		{"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc", 0},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			assert.Equal(t, tt.want, Parse(tt.id).ContextWindow())
		})
	}
}
