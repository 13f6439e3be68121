package wire

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/schemas"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithy "github.com/aws/smithy-go"
	smithydocument "github.com/aws/smithy-go/document"
)

// BytesPerToken is the ratio of the token estimate that the converse
// package and bedrocktest share: a token per four bytes of the canonical
// JSON, the SDK's encoding of the request body.
const BytesPerToken = 4

// EstimateTokens estimates the input tokens of the messages, system prompt
// and tools of in: the bytes of their canonical JSON (see CanonicalJSON)
// over BytesPerToken.
func EstimateTokens(in *bedrockruntime.ConverseInput) int {
	b, err := CanonicalJSON(in)
	if err != nil {
		return 0 // the SDK would fail to send it as well
	}
	return len(b) / BytesPerToken
}

// CanonicalJSON is the SDK's encoding of a request body holding only the
// messages, system prompt and tools of in: what the model reads, without
// the inference settings.
func CanonicalJSON(in *bedrockruntime.ConverseInput) ([]byte, error) {
	var cfg *types.ToolConfiguration
	if in.ToolConfig != nil {
		cfg = &types.ToolConfiguration{Tools: in.ToolConfig.Tools}
	}
	return encode(schemas.ConverseRequest, &bedrockruntime.ConverseInput{
		Messages: in.Messages, System: in.System, ToolConfig: cfg,
	})
}

// DecodeCountTokensInput decodes the body of a CountTokens request for a
// Converse input. The modelId is in the path, not the body.
func DecodeCountTokensInput(body []byte) (*types.ConverseTokensRequest, error) {
	in := &countTokensRequest{}
	if err := decode(schemas.CountTokensRequest, body, in); err != nil {
		return nil, fmt.Errorf("wire: decode count tokens request: %w", err)
	}
	if in.converse == nil {
		return nil, fmt.Errorf("wire: decode count tokens request: no converse input")
	}
	return in.converse, nil
}

// EncodeCountTokensOutput encodes the body of a CountTokens response.
func EncodeCountTokensOutput(inputTokens int32) ([]byte, error) {
	b, err := encode(schemas.CountTokensResponse, &bedrockruntime.CountTokensOutput{InputTokens: &inputTokens})
	if err != nil {
		return nil, fmt.Errorf("wire: encode count tokens response: %w", err)
	}
	return b, nil
}

// countTokensRequest reads a CountTokens request body: its input union,
// of which only the converse member is kept.
type countTokensRequest struct {
	converse *types.ConverseTokensRequest
}

func (v *countTokensRequest) Deserialize(d smithy.ShapeDeserializer) error {
	return smithy.ReadStruct(d, schemas.CountTokensRequest, func(s *smithy.Schema) error {
		if s != schemas.CountTokensRequest_input {
			var skip smithydocument.Value
			return d.ReadDocument(s, &skip)
		}
		return smithy.ReadUnion(d, s, func(ms *smithy.Schema) error {
			if ms == schemas.CountTokensInput_converse {
				v.converse = &types.ConverseTokensRequest{}
				return v.converse.Deserialize(d)
			}
			var skip smithydocument.Value
			return d.ReadDocument(ms, &skip)
		})
	})
}
