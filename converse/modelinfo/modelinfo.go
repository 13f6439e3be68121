// Package modelinfo answers what the converse package knows of a Bedrock
// model from its ID (a model ID, inference profile or ARN). A CLI or a
// service tells its user these before the first call. They are the model's
// on-demand prices and its context window. They say too whether it takes
// prompt cache points and gives a schema natively. The answers come from
// tables in the module's source, each with its sources. An ID they do not
// name (an application inference profile, a newer model) gets the zero
// answer.
package modelinfo

import "github.com/tooluse/bedrock/converse/internal/models"

// Prices are a model's prices in US dollars per million tokens, as
// converse.Options.Prices takes them and converse.Usage.Cost applies them.
type Prices struct {
	Input, Output, CacheRead, CacheWrite float64
	// CacheWrite1h is the price of the cache writes with the one-hour TTL
	// (converse.Usage.CacheWrite1hInputTokens); 0 prices them as CacheWrite.
	CacheWrite1h float64
}

// PricesOf returns Bedrock's on-demand prices for modelID from the price
// table, and whether it has them. The table has Anthropic Claude and Amazon
// Nova models. It adds the regional premium of the newer Claude models
// outside the global inference profile. The table's source and date are in
// its source; for negotiated rates, provisioned throughput or a model it
// lacks, set converse.Options.Prices.
func PricesOf(modelID string) (Prices, bool) {
	p, ok := models.PricesOf(modelID)
	return Prices(p), ok
}

// KnownFamily reports whether the model is of a family whose Converse
// quirks converse knows: Anthropic, Amazon, Meta, Mistral, Cohere,
// DeepSeek and Writer models. For another model, or an application
// inference profile, which names none, converse leaves out the toolResult
// status, assumes tools work while streaming, and knows no context window,
// prices or prompt caching.
func KnownFamily(modelID string) bool {
	return models.Parse(modelID).Known()
}

// ContextWindow returns the context window of the model, in tokens, or 0
// when it is not known. It is as its family's documentation gives it
// (Anthropic Claude, Amazon Nova, Meta Llama 3.1 and later, Mistral Large
// 2). A converse.ContextPolicy's MaxInputTokens is this less the room of
// the answer.
func ContextWindow(modelID string) int {
	return models.Parse(modelID).ContextWindow()
}

// PromptCaching reports whether the model takes prompt cache points, where
// converse.Options.Cache places them (Claude 3.5 Haiku, 3.7 Sonnet,
// Claude 4 and later; Amazon Nova). For another model Options.Cache does
// nothing.
func PromptCaching(modelID string) bool {
	_, ok := models.Parse(modelID).Cache()
	return ok
}

// NativeStructuredOutput reports whether a structured Send with the model
// gives its schema natively (outputConfig.textFormat), which constrains the
// answer. For the other models, the answer is a call of a final tool whose
// input is validated.
func NativeStructuredOutput(modelID string) bool {
	return models.Parse(modelID).NativeStructuredOutput()
}
