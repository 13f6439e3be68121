package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNativeStructuredOutput(t *testing.T) {
	for id, want := range map[string]bool{
		"us.anthropic.claude-sonnet-4-5-20250929-v1:0":                             true,
		"anthropic.claude-haiku-4-5-20251001-v1:0":                                 true,
		"global.anthropic.claude-opus-4-5-20251101-v1:0":                           true,
		"anthropic.claude-opus-4-6-v1":                                             true,
		"us.anthropic.claude-sonnet-5-5":                                           true,
		"us.anthropic.claude-sonnet-5":                                             false,
		"anthropic.claude-sonnet-4-20250514-v1:0":                                  false,
		"anthropic.claude-3-7-sonnet-20250219-v1:0":                                false,
		"us.amazon.nova-pro-v1:0":                                                  false,
		"meta.llama3-1-70b-instruct-v1:0":                                          false,
		"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc": false,
	} {
		t.Run(id, func(t *testing.T) {
			assert.Equal(t, want, Parse(id).NativeStructuredOutput())
		})
	}
}
