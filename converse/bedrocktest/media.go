package bedrocktest

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/models"
	"github.com/tooluse/bedrock/converse/internal/wire"
)

// validateMedia checks the images and documents of messages[n], at its top
// level and inside its toolResult blocks, against Bedrock's limits (see
// models.MaxImages and friends) and what the model family takes in a tool
// result (models.Model.ToolResultMedia).
//
// The texts of the name rules (see also validateDocumentNames) and of
// Claude's complaint about a document beside a toolResult are Bedrock's, as
// reported in public issues; those of the other rules are guesses in
// Bedrock's style.
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
			e = validateImage(b.Value, where+".image")
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
		return Validation(fmt.Sprintf("The model returned the following errors: messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", n, strings.Join(resultIDs, ", ")))
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
			if e := validateImage(v.Value, at+".image"); e != nil {
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

func validateImage(img types.ImageBlock, where string) *Error {
	src, ok := img.Source.(*types.ImageSourceMemberBytes)
	if !ok {
		return nil // an S3 location: not read here
	}
	if len(src.Value) > models.MaxImageBytes {
		return Validation(fmt.Sprintf("The image at %s is %d bytes; an image can be at most 3.75 MB.", where, len(src.Value)))
	}
	w, h, known, err := models.ImageSize(string(img.Format), src.Value)
	switch {
	case err != nil:
		return Validation(fmt.Sprintf("The image at %s could not be processed as %s. Check the image format and try again.", where, img.Format))
	case known && (w > models.MaxImagePixels || h > models.MaxImagePixels):
		return Validation(fmt.Sprintf("The model returned the following errors: %s: At least one of the image dimensions exceed max allowed size: %d pixels", where, models.MaxImagePixels))
	}
	return nil
}

func validateDocument(doc types.DocumentBlock, where string) *Error {
	if doc.Name == nil {
		return Validation(fmt.Sprintf("1 validation error detected: Value null at '%s.name' failed to satisfy constraint: Member must not be null", where))
	}
	if !models.DocumentNameOK(*doc.Name) {
		return Validation("The document file name can only contain alphanumeric characters, whitespace characters, hyphens, parentheses, and square brackets. The name can't contain more than one consecutive whitespace character. Check that the file name conforms to these restrictions and retry your request.")
	}
	if src, ok := doc.Source.(*types.DocumentSourceMemberBytes); ok && len(src.Value) > models.MaxDocumentBytes {
		return Validation(fmt.Sprintf("The document at %s is %d bytes; a document can be at most 4.5 MB.", where, len(src.Value)))
	}
	return nil
}

// validateDocumentNames checks that no two documents of the request's
// messages, at their top level or inside toolResult blocks, have one name:
// Bedrock rejects a repeat anywhere in the request, in one message or in two
// (bifrost issue 7003, ag-ui issue 2425). Names are compared as they are, as
// the public reports show only exact repeats.
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
