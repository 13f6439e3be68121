package converse

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"

	"github.com/tooluse/bedrock/tools"
)

// documentJSON returns the JSON of a smithy document, {} for none.
// MarshalSmithyDocument works for the documents the SDK decodes and for lazy
// documents alike, unlike UnmarshalSmithyDocument, which fails on decoded
// documents (aws-sdk-go-v2 issue 3288).
func documentJSON(d document.Interface) (json.RawMessage, error) {
	if d == nil {
		return json.RawMessage("{}"), nil
	}
	b, err := d.MarshalSmithyDocument()
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read the input document: %v", tools.ErrInvalidInput, err)
	}
	return b, nil
}
