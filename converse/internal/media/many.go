package media

import (
	"iter"
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
	if !capped(m, messages) {
		return messages
	}
	out, copied := messages, false
	for i, msg := range messages {
		var content []types.ContentBlock // a copy of msg.Content, once changed
		for k, b := range msg.Content {
			nb := b
			switch v := b.(type) {
			case *types.ContentBlockMemberImage:
				if tooLarge(v.Value) {
					nb = &types.ContentBlockMemberText{Value: leftOut(v.Value)}
				}
			case *types.ContentBlockMemberToolResult:
				nb = rewriteResults([]types.ContentBlock{b}, largeInResult)[0]
			}
			if nb == b {
				continue
			}
			if content == nil {
				content = slices.Clone(msg.Content)
			}
			content[k] = nb
		}
		if content == nil {
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
	if !capped(m, messages) {
		return false
	}
	for img := range images(messages) {
		if tooLarge(img) {
			return true
		}
	}
	return false
}

// capped reports whether the rule for many images applies to a request
// to m of messages: m caps them, and there are more than 20.
func capped(m models.Model, messages []types.Message) bool {
	if !m.CapsManyImages() {
		return false
	}
	n, _ := Count(messages)
	return n > models.ManyImages
}

// images yields the images of messages, at their top level and in their
// toolResult blocks.
func images(messages []types.Message) iter.Seq[types.ImageBlock] {
	return func(yield func(types.ImageBlock) bool) {
		for _, msg := range messages {
			for _, b := range msg.Content {
				switch v := b.(type) {
				case *types.ContentBlockMemberImage:
					if !yield(v.Value) {
						return
					}
				case *types.ContentBlockMemberToolResult:
					for _, c := range v.Value.Content {
						if img, ok := c.(*types.ToolResultContentBlockMemberImage); ok && !yield(img.Value) {
							return
						}
					}
				}
			}
		}
	}
}

// largeInResult is rewriteResults' replacement of a toolResult's image
// larger than ManyImagePixels a side: its placeholder.
func largeInResult(c types.ToolResultContentBlock) types.ToolResultContentBlock {
	if img, ok := c.(*types.ToolResultContentBlockMemberImage); ok && tooLarge(img.Value) {
		return &types.ToolResultContentBlockMemberText{Value: leftOut(img.Value)}
	}
	return nil
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
	return Info{Type: imageType(img.Format), Size: sourceSize(img.Source), LeftOut: manyLeftOut}.String()
}
