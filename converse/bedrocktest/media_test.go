package bedrocktest

import (
	"context"
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

func repeat[T any](n int, v T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
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
		{name: "20 images and 5 documents", msgs: answered(append(repeat[types.ToolResultContentBlock](20, img),
			documentOf("a", 1), documentOf("b", 1), documentOf("c", 1), documentOf("d", 1), documentOf("e", 1))...)},
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
