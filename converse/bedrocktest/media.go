package bedrocktest

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/media"
	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/models"
	"github.com/tooluse/bedrock/converse/internal/wire"
)

// validateMedia checks the images and documents of messages[n], at its top
// level and inside its toolResult blocks, against Bedrock's limits (see
// models.MaxImages and friends) and what the model family takes in a tool
// result (models.Model.ToolResultMedia).
//
// The texts of the name rules (see also validateDocumentNames) are
// Bedrock's, as reported in public issues. So is Claude's complaint about
// a document beside a toolResult. The texts of the other rules are guesses
// in Bedrock's style.
func validateMedia(m models.Model, n int, msg types.Message) *Error {
	var images, docs int
	var resultIDs []string
	besideResults := false // a top-level document or video block
	for i, block := range msg.Content {
		where := fmt.Sprintf("messages.%d.content.%d", n, i)
		var e *Error
		switch b := block.(type) {
		case *types.ContentBlockMemberImage:
			images++
			e = validateImage(m, b.Value, where+".image")
		case *types.ContentBlockMemberDocument:
			docs++
			besideResults = true
			e = validateDocument(b.Value, where+".document")
		case *types.ContentBlockMemberVideo:
			besideResults = true
		case *types.ContentBlockMemberToolResult:
			resultIDs = append(resultIDs, aws.ToString(b.Value.ToolUseId))
			e = validateResultMedia(m, b.Value, where+".toolResult", &images, &docs)
		}
		if e != nil {
			return e
		}
	}
	if images+docs > 0 && msg.Role != types.ConversationRoleUser {
		return Validation(fmt.Sprintf("messages.%d: images and documents can only be included in a user message.", n))
	}
	if message.LoneDocument(msg) {
		return Validation(fmt.Sprintf("messages.%d: a message with a document block must also include a text block. Add a text block and try again.", n))
	}
	if images > models.MaxImages {
		return Validation(fmt.Sprintf("messages.%d.content holds %d images; a message can include at most %d images.", n, images, models.MaxImages))
	}
	if docs > models.MaxDocuments {
		return Validation(fmt.Sprintf("messages.%d.content holds %d documents; a message can include at most %d documents.", n, docs, models.MaxDocuments))
	}
	if besideResults && len(resultIDs) > 0 && m.Provider == "anthropic" {
		return Validation(fmt.Sprintf(modelErrors+"messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", n, strings.Join(resultIDs, ", ")))
	}
	return nil
}

// validateResultMedia checks the images and documents inside a toolResult
// block and counts them into the message's.
func validateResultMedia(m models.Model, r types.ToolResultBlock, where string, images, docs *int) *Error {
	kinds := m.ToolResultMedia()
	for k, c := range r.Content {
		at := fmt.Sprintf("%s.content.%d", where, k)
		switch v := c.(type) {
		case *types.ToolResultContentBlockMemberImage:
			if !kinds.Images {
				return Validation("This model doesn't support image content in tool results. Remove the image and try again.")
			}
			*images++
			if e := validateImage(m, v.Value, at+".image"); e != nil {
				return e
			}
		case *types.ToolResultContentBlockMemberDocument:
			if !kinds.Documents {
				return Validation("This model doesn't support document content in tool results. Remove the document and try again.")
			}
			*docs++
			if e := validateDocument(v.Value, at+".document"); e != nil {
				return e
			}
		}
	}
	return nil
}

// validateImage checks an image's bytes, as the library does (see
// models.ImageSize). They must not be empty, must be within Bedrock's size,
// whole, and within 8,000 px a side. They must be of the format the block
// says. For bytes of another format, the answer is in Claude's words. For
// bytes of no image format, it is in Nova's, as a captured ConverseStream
// of Nova Lite shows.
func validateImage(m models.Model, img types.ImageBlock, where string) *Error {
	src, ok := img.Source.(*types.ImageSourceMemberBytes)
	switch {
	case img.Source == nil: // the SDK sends nil bytes as null, which decodes to no source
		return emptyBytes(where)
	case !ok:
		return nil // an S3 location: not read here
	case len(src.Value) == 0:
		return emptyBytes(where)
	}
	if len(src.Value) > models.MaxImageBytes {
		return Validation(fmt.Sprintf("The image at %s is %d bytes; an image can be at most 3.75 MB.", where, len(src.Value)))
	}
	switch f := models.ImageFormat(src.Value); {
	case f != "" && f != string(img.Format):
		return Validation(fmt.Sprintf(modelErrors+"%s.source.bytes: Image does not match the provided media type image/%s", where, img.Format))
	case f == "" && m.Provider == "amazon":
		detected, _, _ := strings.Cut(http.DetectContentType(src.Value), ";")
		return Validation(fmt.Sprintf(modelErrors+"The detected file MIME type %s does not match the expected type image/%s. Reformat your input and try again.", detected, img.Format))
	}
	w, h, known, err := models.ImageSize(string(img.Format), src.Value)
	switch {
	case err != nil:
		return Validation(fmt.Sprintf("The image at %s could not be processed as %s. Check the image format and try again.", where, img.Format))
	case known && (w > models.MaxImagePixels || h > models.MaxImagePixels):
		return Validation(fmt.Sprintf(modelErrors+"%s: At least one of the image dimensions exceed max allowed size: %d pixels", where, models.MaxImagePixels))
	}
	return nil
}

// validateDocument checks a document's name and bytes, as the library does
// (see models.DocumentProblem): not empty, within Bedrock's size, and
// starting as the format's files do; Claude's words for a PDF that is not
// one.
func validateDocument(doc types.DocumentBlock, where string) *Error {
	if doc.Name == nil {
		return Validation(fmt.Sprintf("1 validation error detected: Value null at '%s.name' failed to satisfy constraint: Member must not be null", where))
	}
	if !models.DocumentNameOK(*doc.Name) {
		return Validation("The document file name can only contain alphanumeric characters, whitespace characters, hyphens, parentheses, and square brackets. The name can't contain more than one consecutive whitespace character. Check that the file name conforms to these restrictions and retry your request.")
	}
	src, ok := doc.Source.(*types.DocumentSourceMemberBytes)
	switch {
	case doc.Source == nil: // as for an image
		return emptyBytes(where)
	case !ok:
		return nil // an S3 location, or text: not read here
	case len(src.Value) == 0:
		return emptyBytes(where)
	case len(src.Value) > models.MaxDocumentBytes:
		return Validation(fmt.Sprintf("The document at %s is %d bytes; a document can be at most 4.5 MB.", where, len(src.Value)))
	}
	switch problem := models.DocumentProblem(string(doc.Format), src.Value); {
	case problem == "":
		return nil
	case doc.Format == types.DocumentFormatPdf:
		return Validation(modelErrors + "The PDF specified was not valid.")
	default:
		return Validation(fmt.Sprintf("The document at %s could not be processed as %s (%s). Check the document format and try again.", where, doc.Format, problem))
	}
}

// emptyBytes is Bedrock's answer to an image or a document of no bytes
// (ImageSource and DocumentSource: bytes of "Minimum length of 1"), in the
// words of its other length constraints.
func emptyBytes(where string) *Error {
	return Validation(fmt.Sprintf("1 validation error detected: Value at '%s.source.bytes' failed to satisfy constraint: Member must have length greater than or equal to 1", where))
}

// validateRequestMedia checks the limits of a whole request's media, as
// the library counts them (media.Count). A request holds at most 5
// documents (Bedrock's words, as reported in
// aws-samples/generative-ai-use-cases issue 1685). For Claude, it holds at
// most 100 images and documents together (see
// models.Model.MaxRequestMedia). For Claude too, a request of more than 20
// images has none larger than 2,000 px a side (models.ManyImages).
func validateRequestMedia(m models.Model, msgs []types.Message) *Error {
	images, docs := media.Count(msgs)
	if docs > models.MaxRequestDocuments {
		return Validation(fmt.Sprintf("You can't include more than %d documents in a request.", models.MaxRequestDocuments))
	}
	if max := m.MaxRequestMedia(); max > 0 && images+docs > max {
		return Validation(fmt.Sprintf(modelErrors+"too many images and documents: %d + %d > %d", images, docs, max))
	}
	if media.BreaksManyImages(m, msgs) {
		return Validation(fmt.Sprintf(modelErrors+"image exceed max allowed size for many-image requests: %d pixels", models.ManyImagePixels))
	}
	return nil
}

// validateDocumentNames checks that no two documents of the request's
// messages have one name, at their top level or inside toolResult blocks.
// Bedrock rejects a repeat anywhere in the request, in one message or in
// two (bifrost issue 7003, ag-ui issue 2425). Names are compared as they
// are, as the public reports show only exact repeats.
func validateDocumentNames(msgs []types.Message) *Error {
	seen := map[string]bool{}
	for _, name := range wire.DocumentNames(msgs...) {
		if seen[name] {
			return Validation("Messages can't contain duplicate document names. Rename the document and retry your request.")
		}
		seen[name] = true
	}
	return nil
}
