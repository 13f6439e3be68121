package wire

import (
	"bytes"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/internal/models"
	"github.com/tooluse/bedrock/converse/internal/testimage"
)

// TestEstimateTokensOfMedia: an image counts as the model reads it, by its
// size, not as the base64 of its bytes. A PDF counts by its pages, and a
// text document as its text. This holds in a message or in a tool result
// alike. The messages given are not changed.
func TestEstimateTokensOfMedia(t *testing.T) {
	big := testimage.Noise(t, 500, 500) // about a megabyte
	require.Greater(t, len(big), 900_000)
	pdf := []byte("%PDF-1.7 1 0 obj << /Type /Pages >> 2 0 obj << /Type /Page >> 3 0 obj << /Type /Page >>")
	txt := bytes.Repeat([]byte("word "), 2000)
	img := func(data []byte) types.ImageBlock {
		return types.ImageBlock{Format: types.ImageFormatPng, Source: &types.ImageSourceMemberBytes{Value: data}}
	}
	doc := func(f types.DocumentFormat, data []byte) types.DocumentBlock {
		return types.DocumentBlock{Format: f, Name: aws.String("d"), Source: &types.DocumentSourceMemberBytes{Value: data}}
	}
	prompt := &types.ContentBlockMemberText{Value: "What is this?"}
	base := EstimateTokens(&bedrockruntime.ConverseInput{Messages: []types.Message{{Role: "user", Content: []types.ContentBlock{prompt,
		&types.ContentBlockMemberImage{Value: img(nil)}}}}})
	for _, tc := range []struct {
		name  string
		block types.ContentBlock
		media int
	}{
		{"an image", &types.ContentBlockMemberImage{Value: img(big)}, models.ImageTokens(500, 500)},
		{"an image in a result", &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String("t"),
			Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberImage{Value: img(big)}}}}, models.ImageTokens(500, 500)},
		{"an image whose size cannot be read", &types.ContentBlockMemberImage{Value: img([]byte("not a png"))}, models.MaxImageTokens},
		{"a pdf of two pages", &types.ContentBlockMemberDocument{Value: doc(types.DocumentFormatPdf, pdf)}, 2 * models.PDFPageTokens},
		{"a text document", &types.ContentBlockMemberDocument{Value: doc(types.DocumentFormatTxt, txt)}, len(txt) / BytesPerToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := []types.Message{{Role: "user", Content: []types.ContentBlock{prompt, tc.block}}}
			got := EstimateTokens(&bedrockruntime.ConverseInput{Messages: msgs})
			assert.InDelta(t, base+tc.media, got, 40, "the block's JSON besides its bytes is a few tokens")
			assert.InDelta(t, got-EstimateTokens(&bedrockruntime.ConverseInput{Messages: []types.Message{}}), MessageTokens(msgs[0]), 1)
			assert.Same(t, tc.block, msgs[0].Content[1], "the message is not changed")
		})
	}
}
