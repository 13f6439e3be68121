package wire

import (
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/schemas"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithy "github.com/aws/smithy-go"
	smithydocument "github.com/aws/smithy-go/document"

	"github.com/tooluse/bedrock/converse/internal/models"
)

// BytesPerToken is the ratio of the token estimate that the converse
// package and bedrocktest share: a token per four bytes of the canonical
// JSON, the SDK's encoding of the request body.
const BytesPerToken = 4

// EstimateTokens estimates the input tokens of the messages, system prompt
// and tools of in: the bytes of their canonical JSON (see CanonicalJSON)
// over BytesPerToken. The images and documents of the messages are the
// exception. They count as a model reads them (mediaTokens), not as their
// base64.
func EstimateTokens(in *bedrockruntime.ConverseInput) int {
	msgs, media := withoutMedia(in.Messages)
	if media > 0 {
		in = &bedrockruntime.ConverseInput{Messages: msgs, System: in.System, ToolConfig: in.ToolConfig}
	}
	b, err := CanonicalJSON(in)
	if err != nil {
		return 0 // the SDK would fail to send it as well
	}
	return len(b)/BytesPerToken + media
}

// emptyMessages is the canonical JSON of a request with no messages.
const emptyMessages = len(`{"messages":[]}`)

// MessageTokens estimates the tokens one message adds to a request, as
// EstimateTokens counts them.
func MessageTokens(m types.Message) int {
	msgs, media := withoutMedia([]types.Message{m})
	b, err := CanonicalJSON(&bedrockruntime.ConverseInput{Messages: msgs})
	if err != nil {
		return 0
	}
	return (len(b)-emptyMessages)/BytesPerToken + media
}

// withoutMedia returns msgs with the bytes of their images and documents
// (in the messages and in their tool results) left out, and the tokens
// those take (mediaTokens); msgs itself when they hold none.
func withoutMedia(msgs []types.Message) ([]types.Message, int) {
	out, copied, total := msgs, false, 0
	for i, m := range msgs {
		content, n := withoutMediaIn(m.Content, blockWithoutMedia)
		if n == 0 {
			continue
		}
		if !copied {
			out, copied = slices.Clone(msgs), true
		}
		out[i].Content, total = content, total+n
	}
	return out, total
}

// withoutMediaIn returns blocks with each block b replaced by strip(b),
// and the tokens strip found, on a copy; blocks itself when it found none.
func withoutMediaIn[B any](blocks []B, strip func(B) (B, int)) ([]B, int) {
	var out []B
	total := 0
	for i, b := range blocks {
		nb, n := strip(b)
		if n == 0 {
			continue
		}
		if out == nil {
			out = slices.Clone(blocks)
		}
		out[i], total = nb, total+n
	}
	if out == nil {
		return blocks, 0
	}
	return out, total
}

// blockWithoutMedia returns b without the bytes of its image or document,
// or those of its tool result's, and the tokens they take; b and 0 when it
// has none.
func blockWithoutMedia(b types.ContentBlock) (types.ContentBlock, int) {
	switch v := b.(type) {
	case *types.ContentBlockMemberImage:
		if img, n := imageWithoutBytes(v.Value); n > 0 {
			return &types.ContentBlockMemberImage{Value: img}, n
		}
	case *types.ContentBlockMemberDocument:
		if doc, n := documentWithoutBytes(v.Value); n > 0 {
			return &types.ContentBlockMemberDocument{Value: doc}, n
		}
	case *types.ContentBlockMemberToolResult:
		if content, n := withoutMediaIn(v.Value.Content, resultWithoutMedia); n > 0 {
			tr := v.Value
			tr.Content = content
			return &types.ContentBlockMemberToolResult{Value: tr}, n
		}
	}
	return b, 0
}

// resultWithoutMedia is blockWithoutMedia for the content of a toolResult.
func resultWithoutMedia(b types.ToolResultContentBlock) (types.ToolResultContentBlock, int) {
	switch v := b.(type) {
	case *types.ToolResultContentBlockMemberImage:
		if img, n := imageWithoutBytes(v.Value); n > 0 {
			return &types.ToolResultContentBlockMemberImage{Value: img}, n
		}
	case *types.ToolResultContentBlockMemberDocument:
		if doc, n := documentWithoutBytes(v.Value); n > 0 {
			return &types.ToolResultContentBlockMemberDocument{Value: doc}, n
		}
	}
	return b, 0
}

// imageWithoutBytes is img without its bytes, and the tokens they take as
// an image. That is models.ImageTokens of its size, read from its header,
// or the most an image takes when the size cannot be read. An image
// without bytes takes 0.
func imageWithoutBytes(img types.ImageBlock) (types.ImageBlock, int) {
	src, ok := img.Source.(*types.ImageSourceMemberBytes)
	if !ok || len(src.Value) == 0 {
		return img, 0
	}
	w, h, known, err := models.ImageSize(string(img.Format), src.Value)
	if !known || err != nil {
		w, h = 0, 0
	}
	img.Source = &types.ImageSourceMemberBytes{}
	return img, models.ImageTokens(w, h)
}

// documentWithoutBytes is doc without its bytes, and the tokens they take.
// A PDF takes its pages (models.PDFPageTokens each). A text format takes
// its text (BytesPerToken). A PDF whose pages cannot be counted, or a
// binary format, takes its base64 as before (four bytes of base64 for
// three).
func documentWithoutBytes(doc types.DocumentBlock) (types.DocumentBlock, int) {
	src, ok := doc.Source.(*types.DocumentSourceMemberBytes)
	if !ok || len(src.Value) == 0 {
		return doc, 0
	}
	data := src.Value
	n := (len(data)*4/3)/BytesPerToken + 1
	switch doc.Format {
	case types.DocumentFormatPdf:
		if pages := models.PDFPages(data); pages > 0 {
			n = pages * models.PDFPageTokens
		}
	case types.DocumentFormatTxt, types.DocumentFormatMd, types.DocumentFormatCsv, types.DocumentFormatHtml:
		n = len(data)/BytesPerToken + 1
	}
	doc.Source = &types.DocumentSourceMemberBytes{}
	return doc, n
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
