package bedrocktest

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/models"
)

// validateOutputSchema checks that the JSON schema of a structured answer
// (outputConfig.textFormat) closes every object schema.
func validateOutputSchema(oc *types.OutputConfig) *Error {
	if oc == nil || oc.TextFormat == nil {
		return nil
	}
	js, ok := oc.TextFormat.Structure.(*types.OutputFormatStructureMemberJsonSchema)
	if !ok || js.Value.Schema == nil {
		return nil
	}
	return closedSchema("output_config.format.schema", []byte(*js.Value.Schema))
}

// closedSchema answers a schema, at field, with an object schema that
// does not set "additionalProperties": false as Anthropic does (see
// models.CloseObjects for the sources). The field names are Anthropic's
// as Bedrock passes its errors on: tools.N.custom as in BerriAI/litellm
// pull 39115; output_config.format.schema is guessed from Anthropic's
// request field, as veryfront/veryfront-code issue 3918 quotes it.
func closedSchema(field string, schema []byte) *Error {
	var m map[string]any
	if json.Unmarshal(schema, &m) != nil {
		return nil
	}
	value, open := models.OpenObject(m)
	switch {
	case !open:
		return nil
	case value == nil:
		return Validation(fmt.Sprintf("The model returned the following errors: %s: For 'object' type, 'additionalProperties' must be explicitly set to false", field))
	}
	return Validation(fmt.Sprintf("The model returned the following errors: %s: For 'object' type, 'additionalProperties: true' is not supported. Please set 'additionalProperties' to false", field))
}
