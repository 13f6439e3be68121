package bedrocktest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/models"
)

// validateToolChoice rejects a toolChoice the model does not take, and a
// forcing one beside Claude's extended thinking.
func validateToolChoice(m models.Model, req *Request) *Error {
	if req.ToolConfig == nil {
		return nil
	}
	choice := m.ToolChoice()
	switch req.ToolConfig.ToolChoice.(type) {
	case *types.ToolChoiceMemberAny:
		if !choice.Any {
			return unsupportedChoice("any")
		}
	case *types.ToolChoiceMemberTool:
		if !choice.Tool {
			return unsupportedChoice("tool")
		}
	default:
		return nil
	}
	if m.ThinkingForbidsForcing(documentJSON(req.AdditionalModelRequestFields)) {
		return Validation(modelErrors + "Thinking may not be enabled when tool_choice forces tool use.")
	}
	return nil
}

// unsupportedChoice is Bedrock's answer to a toolChoice field the model
// does not take; the wording is that of its answer for any
// (run-llama/llama_index issue 19886), with the field named.
func unsupportedChoice(field string) *Error {
	return Validation(fmt.Sprintf("This model doesn't support the toolConfig.toolChoice.%s field. Remove toolConfig.toolChoice.%[1]s and try again.", field))
}

// validateSampling checks maxTokens, at least 1 (the API reference's
// InferenceConfiguration). It checks that temperature and topP are each
// within the API's range, 0 to 1, for every model. The Claude models that
// take only one of them must not get both.
func validateSampling(m models.Model, ic *types.InferenceConfiguration) *Error {
	if ic == nil {
		return nil
	}
	if ic.MaxTokens != nil && *ic.MaxTokens < 1 {
		return Validation(fmt.Sprintf("1 validation error detected: Value '%d' at 'inferenceConfig.maxTokens' failed to satisfy constraint: Member must have value greater than or equal to 1", *ic.MaxTokens))
	}
	for _, p := range []struct {
		name string
		v    *float32
	}{{"temperature", ic.Temperature}, {"topP", ic.TopP}} {
		if p.v == nil {
			continue
		}
		bound := ""
		switch {
		case *p.v > 1:
			bound = "less than or equal to 1"
		case *p.v < 0:
			bound = "greater than or equal to 0"
		default:
			continue
		}
		return Validation(fmt.Sprintf("1 validation error detected: Value '%s' at 'inferenceConfig.%s' failed to satisfy constraint: Member must have value %s", javaFloat(*p.v), p.name, bound))
	}
	if ic.Temperature != nil && ic.TopP != nil && m.ExclusiveSampling() {
		return Validation(modelErrors + "`temperature` and `top_p` cannot both be specified for this model. Please use only one.")
	}
	return nil
}

// javaFloat formats v as Java's Float.toString does in Coral's messages
// for ordinary values: 1.5, 2.0.
func javaFloat(v float32) string {
	s := strconv.FormatFloat(float64(v), 'f', -1, 32)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// documentJSON is d's JSON, or nil.
func documentJSON(d document.Interface) []byte {
	if d == nil {
		return nil
	}
	b, err := d.MarshalSmithyDocument()
	if err != nil {
		return nil
	}
	return b
}

// The model's answers to extended thinking's parameters, as Bedrock passes
// them on. budget_tokens is from LibreChat issue 8346 (Claude 3.7 Sonnet
// on Bedrock). max_tokens is from vercel/ai issue 7927 (Opus 4.1 on
// Bedrock). temperature is from MartialBE/one-hub issue 529. top_k is from
// quarkus-langchain4j issue 1812 (Anthropic's API). top_p's wording is
// guessed from top_k's. Anthropic's extended thinking guide allows top_p
// from 0.95 to 1 with thinking. Before it did, Claude 3.7 on Bedrock said
// "top_p must be unset when thinking is enabled" (n8n issue 14288).
const (
	thinkingDocs     = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking"
	budgetMissing    = modelErrors + "thinking.enabled.budget_tokens: Field required"
	budgetTooSmall   = modelErrors + "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
	budgetOverMax    = modelErrors + "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size"
	thinkingTemp     = modelErrors + "`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at " + thinkingDocs
	thinkingTopP     = modelErrors + "`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled. Please consult our documentation at " + thinkingDocs
	thinkingTopK     = modelErrors + "`top_k` must be unset when thinking is enabled. Please consult our documentation at " + thinkingDocs
	minThinkingToken = 1024
)

// validateThinking checks the parameters beside Claude's extended thinking
// with a budget: budget_tokens at least 1024 and, unless interleaved
// thinking is on, below maxTokens; temperature 1 or unset, topP from 0.95
// or unset, top_k unset.
func validateThinking(m models.Model, req *Request) *Error {
	t, on := m.BudgetThinking(documentJSON(req.AdditionalModelRequestFields))
	if !on {
		return nil
	}
	var ic types.InferenceConfiguration
	if req.InferenceConfig != nil {
		ic = *req.InferenceConfig
	}
	switch {
	case t.Budget == nil:
		return Validation(budgetMissing)
	case *t.Budget < minThinkingToken:
		return Validation(budgetTooSmall)
	case ic.MaxTokens != nil && int(*ic.MaxTokens) <= *t.Budget && !t.Interleaved:
		return Validation(budgetOverMax)
	case ic.Temperature != nil && *ic.Temperature != 1:
		return Validation(thinkingTemp)
	case ic.TopP != nil && *ic.TopP < 0.95:
		return Validation(thinkingTopP)
	case t.TopK:
		return Validation(thinkingTopK)
	}
	return nil
}
