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
		return Validation("The model returned the following errors: Thinking may not be enabled when tool_choice forces tool use.")
	}
	return nil
}

// unsupportedChoice is Bedrock's answer to a toolChoice field the model
// does not take; the wording is that of its answer for any
// (run-llama/llama_index issue 19886), with the field named.
func unsupportedChoice(field string) *Error {
	return Validation(fmt.Sprintf("This model doesn't support the toolConfig.toolChoice.%s field. Remove toolConfig.toolChoice.%[1]s and try again.", field))
}

// validateSampling checks temperature and topP: each within the API's
// range, 0 to 1, for every model, and not both for the Claude models that
// take only one of them.
func validateSampling(m models.Model, ic *types.InferenceConfiguration) *Error {
	if ic == nil {
		return nil
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
		return Validation("The model returned the following errors: `temperature` and `top_p` cannot both be specified for this model. Please use only one.")
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
