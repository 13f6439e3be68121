package bedrocktest

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/internal/testimage"
)

func imageOf(data []byte) *types.ToolResultContentBlockMemberImage {
	return &types.ToolResultContentBlockMemberImage{Value: types.ImageBlock{
		Format: types.ImageFormatPng, Source: &types.ImageSourceMemberBytes{Value: data}}}
}

func documentOf(name string, size int) *types.ToolResultContentBlockMemberDocument {
	return &types.ToolResultContentBlockMemberDocument{Value: types.DocumentBlock{
		Format: types.DocumentFormatTxt, Name: aws.String(name), Source: &types.DocumentSourceMemberBytes{Value: make([]byte, size)}}}
}

func webpOf(data []byte) *types.ToolResultContentBlockMemberImage {
	return &types.ToolResultContentBlockMemberImage{Value: types.ImageBlock{
		Format: types.ImageFormatWebp, Source: &types.ImageSourceMemberBytes{Value: data}}}
}

// docBlock is a document of a message's top level.
func docBlock(name string) types.ContentBlock {
	return &types.ContentBlockMemberDocument{Value: documentOf(name, 1).Value}
}

func repeat[T any](n int, v T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// results is a prompt and n calls, each answered with per blocks c, the
// calls t0 to t(n-1).
func results(n, per int, c types.ToolResultContentBlock) []types.Message {
	msgs := []types.Message{user(text("a"))}
	for i := range n {
		id := fmt.Sprintf("t%d", i)
		msgs = append(msgs, assistant(use(id)), user(result(id, "", repeat(per, c)...)))
	}
	return msgs
}

// TestValidateMedia sends each history through the real SDK client, so the
// media also cross the wire as Bedrock gets them.
func TestValidateMedia(t *testing.T) {
	small := testimage.Plain(t, 2, 2)
	img := imageOf(small)
	doc := documentOf("notes", 10)
	answered := func(content ...types.ToolResultContentBlock) []types.Message {
		return []types.Message{user(text("a")), assistant(use("t1")), user(result("t1", "", content...))}
	}
	tests := []struct {
		name  string
		model string
		msgs  []types.Message
		want  string // "" for valid
	}{
		{name: "an image and a document on claude", msgs: answered(img, doc)},
		{name: "a document with no text beside it", msgs: []types.Message{user(&types.ContentBlockMemberDocument{Value: doc.Value})},
			want: "messages.0: a message with a document block must also include a text block. Add a text block and try again."},
		{name: "15 images and 5 documents", msgs: answered(append(repeat[types.ToolResultContentBlock](15, img),
			documentOf("a", 1), documentOf("b", 1), documentOf("c", 1), documentOf("d", 1), documentOf("e", 1))...)},
		{name: "96 images and 5 documents over six messages on claude", msgs: append(results(5, 19, img), assistant(use("t5")),
			user(result("t5", "", img, documentOf("a", 1), documentOf("b", 1), documentOf("c", 1), documentOf("d", 1), documentOf("e", 1)))),
			want: "The model returned the following errors: too many images and documents: 96 + 5 > 100"},
		{name: "20 images and 5 documents on nova", model: "us.amazon.nova-pro-v1:0", msgs: []types.Message{
			user(text("a"), &types.ContentBlockMemberDocument{Value: doc.Value}), assistant(use("t1")),
			user(result("t1", "", repeat[types.ToolResultContentBlock](20, img)...), text("and"), docBlock("b"), docBlock("c"), docBlock("d"), docBlock("e")),
		}},
		{name: "21 images over two messages on claude", msgs: []types.Message{
			user(text("a")), assistant(use("t1")), user(result("t1", "", repeat[types.ToolResultContentBlock](11, img)...)),
			assistant(use("t2")), user(result("t2", "", repeat[types.ToolResultContentBlock](10, img)...)),
		}},
		{name: "101 images over six messages on claude", msgs: append(results(5, 20, img), assistant(use("t5")), user(result("t5", "", img))),
			want: "The model returned the following errors: too many images and documents: 101 + 0 > 100"},
		{name: "21 images over two messages, one larger than 2000 px, on claude", msgs: []types.Message{
			user(text("a")), assistant(use("t1")), user(result("t1", "", repeat[types.ToolResultContentBlock](20, img)...)),
			assistant(use("t2")), user(result("t2", "", imageOf(testimage.Plain(t, 2001, 10)))),
		}, want: "The model returned the following errors: image exceed max allowed size for many-image requests: 2000 pixels"},
		{name: "6 documents over two messages", model: "us.amazon.nova-pro-v1:0", msgs: []types.Message{
			user(text("a"), docBlock("a"), docBlock("b"), docBlock("c")), assistant(text("ok")),
			user(text("b"), docBlock("d"), docBlock("e"), docBlock("f")),
		}, want: "You can't include more than 5 documents in a request."},
		{name: "an empty image", msgs: answered(imageOf(nil)),
			want: "1 validation error detected: Value at 'messages.2.content.0.toolResult.content.0.image.source.bytes' failed to satisfy constraint: Member must have length greater than or equal to 1"},
		{name: "an image of no bytes", msgs: answered(imageOf([]byte{})),
			want: "1 validation error detected: Value at 'messages.2.content.0.toolResult.content.0.image.source.bytes' failed to satisfy constraint: Member must have length greater than or equal to 1"},
		{name: "a document of nil bytes", msgs: answered(&types.ToolResultContentBlockMemberDocument{Value: types.DocumentBlock{
			Format: types.DocumentFormatTxt, Name: aws.String("n"), Source: &types.DocumentSourceMemberBytes{}}}),
			want: "1 validation error detected: Value at 'messages.2.content.0.toolResult.content.0.document.source.bytes' failed to satisfy constraint: Member must have length greater than or equal to 1"},
		{name: "an empty document", msgs: answered(documentOf("empty", 0)),
			want: "1 validation error detected: Value at 'messages.2.content.0.toolResult.content.0.document.source.bytes' failed to satisfy constraint: Member must have length greater than or equal to 1"},
		{name: "a truncated png", msgs: answered(imageOf(small[:len(small)-1])),
			want: "The image at messages.2.content.0.toolResult.content.0.image could not be processed as png. Check the image format and try again."},
		{name: "a jpeg as png", msgs: answered(imageOf(testimage.JPEG(t, 2, 2))),
			want: "The model returned the following errors: messages.2.content.0.toolResult.content.0.image.source.bytes: Image does not match the provided media type image/png"},
		{name: "a webp 9000 px wide", msgs: answered(webpOf(testimage.WebP(9000, 10))),
			want: "The model returned the following errors: messages.2.content.0.toolResult.content.0.image: At least one of the image dimensions exceed max allowed size: 8000 pixels"},
		{name: "a webp", msgs: answered(webpOf(testimage.WebP(10, 10)))},
		{name: "a pdf that is not one", msgs: answered(&types.ToolResultContentBlockMemberDocument{Value: types.DocumentBlock{
			Format: types.DocumentFormatPdf, Name: aws.String("r"), Source: &types.DocumentSourceMemberBytes{Value: []byte("<html>")}}}),
			want: "The model returned the following errors: The PDF specified was not valid."},
		{name: "a csv that is not UTF-8", msgs: answered(&types.ToolResultContentBlockMemberDocument{Value: types.DocumentBlock{
			Format: types.DocumentFormatCsv, Name: aws.String("c"), Source: &types.DocumentSourceMemberBytes{Value: []byte("a,\xff")}}}),
			want: "The document at messages.2.content.0.toolResult.content.0.document could not be processed as csv (not UTF-8 text). Check the document format and try again."},
		{name: "21 images", msgs: answered(repeat[types.ToolResultContentBlock](21, img)...),
			want: "messages.2.content holds 21 images; a message can include at most 20 images."},
		{name: "21 images over two results", msgs: []types.Message{
			user(text("a")), assistant(use("t1"), use("t2")),
			user(result("t1", "", repeat[types.ToolResultContentBlock](11, img)...), result("t2", "", repeat[types.ToolResultContentBlock](10, img)...)),
		}, want: "messages.2.content holds 21 images; a message can include at most 20 images."},
		{name: "a 4 MB image", msgs: answered(imageOf(make([]byte, 4_000_000))),
			want: "The image at messages.2.content.0.toolResult.content.0.image is 4000000 bytes; an image can be at most 3.75 MB."},
		{name: "an image 8001 px high", msgs: answered(imageOf(testimage.Plain(t, 1, 8001))),
			want: "The model returned the following errors: messages.2.content.0.toolResult.content.0.image: At least one of the image dimensions exceed max allowed size: 8000 pixels"},
		{name: "an unreadable image", msgs: answered(imageOf([]byte("nope"))),
			want: "The image at messages.2.content.0.toolResult.content.0.image could not be processed as png. Check the image format and try again."},
		{name: "6 documents", msgs: answered(repeat[types.ToolResultContentBlock](6, doc)...),
			want: "messages.2.content holds 6 documents; a message can include at most 5 documents."},
		{name: "a 5 MB document", msgs: answered(documentOf("big", 5_000_000)),
			want: "The document at messages.2.content.0.toolResult.content.0.document is 5000000 bytes; a document can be at most 4.5 MB."},
		{name: "a name twice in a result", msgs: answered(documentOf("document 1", 1), documentOf("document 1", 1)),
			want: "Messages can't contain duplicate document names. Rename the document and retry your request."},
		{name: "a name twice over two results", msgs: []types.Message{
			user(text("a")), assistant(use("t1"), use("t2")),
			user(result("t1", "", documentOf("document 1", 1)), result("t2", "", documentOf("document 1", 1))),
		}, want: "Messages can't contain duplicate document names. Rename the document and retry your request."},
		{name: "a name of an earlier message", msgs: []types.Message{
			user(text("a")), assistant(use("t1")), user(result("t1", "", documentOf("document 1", 1))),
			assistant(use("t2")), user(result("t2", "", documentOf("document 1", 1))),
		}, want: "Messages can't contain duplicate document names. Rename the document and retry your request."},
		{name: "a name of a prompt's document", msgs: []types.Message{
			user(text("a"), &types.ContentBlockMemberDocument{Value: doc.Value}), assistant(use("t1")), user(result("t1", "", doc)),
		}, want: "Messages can't contain duplicate document names. Rename the document and retry your request."},
		{name: "distinct names over messages", msgs: []types.Message{
			user(text("a"), &types.ContentBlockMemberDocument{Value: doc.Value}), assistant(use("t1")),
			user(result("t1", "", documentOf("document 1", 1), documentOf("document 2", 1))),
			assistant(use("t2")), user(result("t2", "", documentOf("document 3", 1))),
		}},
		{name: "a file name", msgs: answered(documentOf("notes.txt", 1)),
			want: "The document file name can only contain alphanumeric characters, whitespace characters, hyphens, parentheses, and square brackets. The name can't contain more than one consecutive whitespace character. Check that the file name conforms to these restrictions and retry your request."},
		{name: "two spaces in a name", msgs: answered(documentOf("my  notes", 1)),
			want: "The document file name can only contain alphanumeric characters, whitespace characters, hyphens, parentheses, and square brackets. The name can't contain more than one consecutive whitespace character. Check that the file name conforms to these restrictions and retry your request."},
		{name: "an image on nova", model: "us.amazon.nova-pro-v1:0", msgs: answered(img)},
		{name: "a document on nova", model: "us.amazon.nova-pro-v1:0", msgs: answered(doc),
			want: "This model doesn't support document content in tool results. Remove the document and try again."},
		{name: "an image on claude 3.5 haiku", model: "anthropic.claude-3-5-haiku-20241022-v1:0", msgs: answered(img),
			want: "This model doesn't support image content in tool results. Remove the image and try again."},
		{name: "an image on llama", model: "meta.llama3-1-70b-instruct-v1:0", msgs: answered(img),
			want: "This model doesn't support image content in tool results. Remove the image and try again."},
		{name: "a document on mistral", model: "mistral.mistral-large-2407-v1:0", msgs: answered(doc),
			want: "This model doesn't support document content in tool results. Remove the document and try again."},
		{name: "a document beside a result on claude", msgs: []types.Message{
			user(text("a")), assistant(use("t1")),
			user(result("t1", ""), &types.ContentBlockMemberDocument{Value: doc.Value}, text("see the file")),
		}, want: "The model returned the following errors: messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: t1. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		{name: "a document beside a result on nova", model: "us.amazon.nova-pro-v1:0", msgs: []types.Message{
			user(text("a")), assistant(use("t1")),
			user(result("t1", ""), &types.ContentBlockMemberDocument{Value: doc.Value}, text("see the file")),
		}},
		{name: "an image from the assistant", msgs: []types.Message{
			user(text("a")), assistant(&types.ContentBlockMemberImage{Value: img.Value}),
		}, want: "messages.1: images and documents can only be included in a user message."},
	}
	srv := NewServer(HandlerFunc(func(context.Context, *Request) (*Reply, error) { return Text("ok"), nil }))
	defer srv.Close()
	client := srv.Client()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := testModel
			if tt.model != "" {
				model = tt.model
			}
			_, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{
				ModelId: aws.String(model), Messages: tt.msgs, ToolConfig: weatherTools()})
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			var ve *types.ValidationException
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tt.want, ve.ErrorMessage())
		})
	}
}
