package media

import (
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/models"
)

// manyLeftOut says why ManyImages left an image out.
const manyLeftOut = "a request of more than 20 images takes none larger than 2000 px a side"

// ManyImages keeps the images of a request's messages within Claude's rule
// for many images (see models.Model.CapsManyImages): in a request of more
// than 20 images, each image larger than 2,000 px a side, at a message's
// top level or in a toolResult block, is replaced by a placeholder. It
// changes no message of messages: it returns messages, or a copy with new
// messages where something changed.
func ManyImages(m models.Model, messages []types.Message) []types.Message {
	if !m.CapsManyImages() || countImages(messages) <= models.ManyImages {
		return messages
	}
	out, copied := messages, false
	for i, msg := range messages {
		content := rewriteResults(msg.Content, func(c types.ToolResultContentBlock) types.ToolResultContentBlock {
			if img, ok := c.(*types.ToolResultContentBlockMemberImage); ok && tooLarge(img.Value) {
				return &types.ToolResultContentBlockMemberText{Value: leftOut(img.Value)}
			}
			return nil
		})
		changed := len(content) > 0 && &content[0] != &msg.Content[0] // rewriteResults copied it
		for k, b := range content {
			if img, ok := b.(*types.ContentBlockMemberImage); ok && tooLarge(img.Value) {
				if !changed {
					content, changed = slices.Clone(content), true
				}
				content[k] = &types.ContentBlockMemberText{Value: leftOut(img.Value)}
			}
		}
		if !changed {
			continue
		}
		if !copied {
			out, copied = slices.Clone(messages), true
		}
		out[i] = types.Message{Role: msg.Role, Content: content}
	}
	return out
}

// BreaksManyImages reports whether messages, those of a request to m,
// break Claude's rule for many images that ManyImages keeps.
func BreaksManyImages(m models.Model, messages []types.Message) bool {
	if !m.CapsManyImages() || countImages(messages) <= models.ManyImages {
		return false
	}
	for _, msg := range messages {
		for _, b := range msg.Content {
			switch v := b.(type) {
			case *types.ContentBlockMemberImage:
				if tooLarge(v.Value) {
					return true
				}
			case *types.ContentBlockMemberToolResult:
				for _, c := range v.Value.Content {
					if img, ok := c.(*types.ToolResultContentBlockMemberImage); ok && tooLarge(img.Value) {
						return true
					}
				}
			}
		}
	}
	return false
}

// countImages counts the images of messages, at their top level and in
// their toolResult blocks.
func countImages(messages []types.Message) int {
	n := 0
	for _, msg := range messages {
		for _, b := range msg.Content {
			switch v := b.(type) {
			case *types.ContentBlockMemberImage:
				n++
			case *types.ContentBlockMemberToolResult:
				for _, c := range v.Value.Content {
					if _, ok := c.(*types.ToolResultContentBlockMemberImage); ok {
						n++
					}
				}
			}
		}
	}
	return n
}

// tooLarge reports whether img is larger than ManyImagePixels a side, as
// far as its bytes tell.
func tooLarge(img types.ImageBlock) bool {
	src, ok := img.Source.(*types.ImageSourceMemberBytes)
	if !ok {
		return false
	}
	w, h, known, err := models.ImageSize(string(img.Format), src.Value)
	return err == nil && known && (w > models.ManyImagePixels || h > models.ManyImagePixels)
}

// leftOut is the placeholder of an image ManyImages leaves out.
func leftOut(img types.ImageBlock) string {
	return Info{Type: mediaType(string(img.Format), imageFormats), Size: sourceSize(img.Source), LeftOut: manyLeftOut}.String()
}
