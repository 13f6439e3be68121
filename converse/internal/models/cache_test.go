package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCache(t *testing.T) {
	tests := []struct {
		id   string
		want Cache
		ok   bool
	}{
		{"us.anthropic.claude-3-7-sonnet-20250219-v1:0", claude(1024, false), true},
		{"anthropic.claude-3-5-haiku-20241022-v1:0", claude(2048, false), true},
		{"anthropic.claude-opus-4-1-20250805-v1:0", claude(1024, false), true},
		{"anthropic.claude-opus-4-20250514-v1:0", claude(1024, false), true},
		{"anthropic.claude-opus-4-5-20251101-v1:0", claude(4096, true), true},
		{"global.anthropic.claude-sonnet-4-5-20250929-v1:0", claude(1024, true), true},
		{"anthropic.claude-sonnet-4-20250514-v1:0", claude(1024, false), true},
		{"global.anthropic.claude-opus-4-7", claude(4096, false), true},          // unlisted: the cautious rule, not Opus 4's
		{"anthropic.claude-sonnet-4-7-20270101-v1:0", claude(4096, false), true}, // nor Sonnet 4's
		{"anthropic.claude-haiku-4-5-20251001-v1:0", claude(4096, true), true},
		{"anthropic.claude-sonnet-5-20270101-v1:0", claude(4096, false), true},
		{"us.amazon.nova-pro-v1:0", nova, true},
		{"amazon.nova-micro-v1:0", nova, true},
		{"amazon.nova-2-lite-v1:0", Cache{}, false},
		{"anthropic.claude-3-5-sonnet-20241022-v2:0", Cache{}, false},
		{"anthropic.claude-3-haiku-20240307-v1:0", Cache{}, false},
		{"anthropic.claude-v2", Cache{}, false},
		{"meta.llama3-1-70b-instruct-v1:0", Cache{}, false},
		{"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc", Cache{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got, ok := Parse(tt.id).Cache()
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}
