package bedrocktest

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/models"
)

// validateOutputSchema checks a request's structured output
// (outputConfig.textFormat). Its JSON schema must close every object
// schema. The model must take it; an ID that names no model, such as an
// application inference profile's ARN, is let through. No document or
// search result of the request may have citations enabled.
func validateOutputSchema(m models.Model, req *Request) *Error {
	oc := req.OutputConfig
	if oc == nil || oc.TextFormat == nil {
		return nil
	}
	if js, ok := oc.TextFormat.Structure.(*types.OutputFormatStructureMemberJsonSchema); ok && js.Value.Schema != nil {
		if e := closedSchema("output_config.format.schema", []byte(*js.Value.Schema)); e != nil {
			return e
		}
	}
	if m != (models.Model{}) && !m.NativeStructuredOutput() {
		return Validation(noStructuredOutput)
	}
	if message.Citing(req.Messages) {
		return Validation(citationsWithSchema)
	}
	return nil
}

// Bedrock's answers to a structured output it cannot give; neither was
// found quoted. noStructuredOutput is worded as Bedrock words a field the
// model does not take (see unsupportedChoice). citationsWithSchema is
// Anthropic's rule (its structured outputs guide: "incompatible with
// citations"). It is passed on as Bedrock passes the model's errors.
const (
	noStructuredOutput  = "This model doesn't support the outputConfig.textFormat field. Remove outputConfig.textFormat and try again."
	citationsWithSchema = modelErrors + "citations cannot be enabled when output_config.format is set: structured outputs are incompatible with citations."
)

// closedSchema answers a schema, at field, as Anthropic does. It answers a
// keyword Anthropic's structured outputs do not take
// (models.UnsupportedKeyword; the words of agentjido/req_llm issue 302). It
// answers an object schema that does not set "additionalProperties": false
// (see models.CloseObjects for the sources). The field names are Anthropic's
// as Bedrock passes its errors on: tools.N.custom as in BerriAI/litellm pull
// 39115; output_config.format.schema is guessed from Anthropic's request
// field, as veryfront/veryfront-code issue 3918 quotes it.
func closedSchema(field string, schema []byte) *Error {
	var m map[string]any
	if json.Unmarshal(schema, &m) != nil {
		return nil
	}
	if keyword, typ, found := models.UnsupportedKeyword(m); found {
		return Validation(fmt.Sprintf(modelErrors+"%s: For '%s' type, property '%s' is not supported", field, typ, keyword))
	}
	value, open := models.OpenObject(m)
	switch {
	case !open:
		return nil
	case value == nil:
		return Validation(fmt.Sprintf(modelErrors+"%s: For 'object' type, 'additionalProperties' must be explicitly set to false", field))
	}
	return Validation(fmt.Sprintf(modelErrors+"%s: For 'object' type, 'additionalProperties: true' is not supported. Please set 'additionalProperties' to false", field))
}
