package modelinfo_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/modelinfo"
)

// TestPricesOf: the newer Claude models cost 10% more outside the global
// inference profile; models the table lacks have no prices.
func TestPricesOf(t *testing.T) {
	global, ok := modelinfo.PricesOf("global.anthropic.claude-sonnet-4-5-20250929-v1:0")
	require.True(t, ok)
	assert.Equal(t, modelinfo.Prices{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75, CacheWrite1h: 6}, global)
	regional, ok := modelinfo.PricesOf("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
	require.True(t, ok)
	assert.InDelta(t, 3.3, regional.Input, 1e-9)
	assert.InDelta(t, 16.5, regional.Output, 1e-9)
	older, ok := modelinfo.PricesOf("arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0")
	require.True(t, ok)
	assert.Equal(t, 0.8, older.Input)
	newer, ok := modelinfo.PricesOf("global.anthropic.claude-sonnet-5-5")
	require.True(t, ok)
	assert.Equal(t, modelinfo.Prices{Input: 2, Output: 10, CacheRead: 0.2, CacheWrite: 2.5, CacheWrite1h: 4}, newer)
	_, ok = modelinfo.PricesOf("global.anthropic.claude-opus-5-5") // its cache prices are not published
	assert.False(t, ok)
	_, ok = modelinfo.PricesOf("cohere.command-r-v1:0")
	assert.False(t, ok)
}

func TestContextWindow(t *testing.T) {
	assert.Equal(t, 200_000, modelinfo.ContextWindow("us.anthropic.claude-sonnet-4-5-20250929-v1:0"))
	assert.Equal(t, 1_000_000, modelinfo.ContextWindow("us.anthropic.claude-opus-4-7"))
	assert.Equal(t, 1_000_000, modelinfo.ContextWindow("global.anthropic.claude-sonnet-5-5"))
	assert.Equal(t, 300_000, modelinfo.ContextWindow("amazon.nova-pro-v1:0"))
	assert.Zero(t, modelinfo.ContextWindow("arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc"))
}

// TestKnownFamily: the families of the tables, by any form of ID, are
// known; another provider and an application inference profile are not.
func TestKnownFamily(t *testing.T) {
	for id, want := range map[string]bool{
		"global.anthropic.claude-sonnet-4-5-20250929-v1:0":                         true,
		"arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-pro-v1:0":         true,
		"us.meta.llama3-3-70b-instruct-v1:0":                                       true,
		"cohere.command-r-v1:0":                                                    true,
		"acme.robot-1":                                                             false,
		"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc": false,
		"": false,
	} {
		assert.Equal(t, want, modelinfo.KnownFamily(id), id)
	}
}

// What a model does with converse.Options.Cache and a structured
// Send, as a CLI or a service tells its user before the first call.
func ExamplePromptCaching() {
	for _, model := range []string{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "us.amazon.nova-pro-v1:0", "us.meta.llama3-3-70b-instruct-v1:0"} {
		fmt.Println(model, modelinfo.PromptCaching(model), modelinfo.NativeStructuredOutput(model))
	}
	// Output:
	// us.anthropic.claude-sonnet-4-5-20250929-v1:0 true true
	// us.amazon.nova-pro-v1:0 true false
	// us.meta.llama3-3-70b-instruct-v1:0 false false
}

// The cost of a turn at the price table's prices, and the window a
// context policy starts from.
func ExamplePricesOf() {
	const model = "global.anthropic.claude-sonnet-4-5-20250929-v1:0"
	p, ok := modelinfo.PricesOf(model)
	fmt.Println(ok, p.Input, p.Output, modelinfo.ContextWindow(model))
	// Output:
	// true 3 15 200000
}
