package media

import (
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/models"
)

// documentsLeftOut is the reason of the placeholder of a document Request
// leaves out.
const documentsLeftOut = "over the request's limit of 5 documents, which the newest take"

// mediaStep is how many media Request leaves out at once past the model's
// limit of images and documents together (models.Model.MaxRequestMedia).
// So the messages it rewrites change once every mediaStep media, not at
// every one. The prompt cache then holds over the requests between.
const mediaStep = 5

// medium is an image or a document of a request's messages: at
// Content[block] of messages[msg], or at Content[inner] of that toolResult
// block (inner is -1 for a block at the message's top level).
type medium struct {
	msg, block, inner int
	doc               bool
	info              Info             // its type and size, for a placeholder
	image             types.ImageBlock // an image's block, for the rule for many images
}

// Request keeps the media of a request's messages to m, at their top level
// and in toolResult blocks, within Bedrock's limits for a whole request.
// A request holds at most models.MaxRequestDocuments documents. It holds
// at most m.MaxRequestMedia() images and documents together (Claude: 100).
// Claude's rule for many images applies too (see
// models.Model.CapsManyImages): in a request of more than 20 images, none
// is larger than 2,000 px a side.
//
// The oldest go first, so that the newest reach the model. The documents
// past the newest 5 are replaced by placeholders first. Then, of the media
// left, the oldest past the model's limit go, rounded up to a multiple of
// mediaStep. Then, if more than 20 images are still sent, the large ones
// go. As a conversation grows, a medium left out for a limit stays left
// out. What a request sends of a message changes only when a document or
// mediaStep media more go over a limit.
//
// The history keeps every medium: Request is applied to each request, and
// changes no message of messages: it returns messages, or a copy with new
// messages where something changed.
func Request(m models.Model, messages []types.Message) []types.Message {
	all := mediaOf(messages)
	if len(all) == 0 {
		return messages
	}
	out := map[int]string{} // the places in all of the media left out, and why
	docs := 0
	for _, md := range all {
		if md.doc {
			docs++
		}
	}
	var kept []int // the places in all of the media the documents' limit keeps
	for i, md := range all {
		if md.doc && docs > models.MaxRequestDocuments {
			docs--
			out[i] = documentsLeftOut
			continue
		}
		kept = append(kept, i)
	}
	if max := m.MaxRequestMedia(); max > 0 && len(kept) > max {
		over := (len(kept) - max + mediaStep - 1) / mediaStep * mediaStep
		for _, i := range kept[:over] {
			out[i] = fmt.Sprintf("over the model's limit of %d images and documents in a request, which the newest take", max)
		}
	}
	if m.CapsManyImages() {
		var sent []int // the places in all of the images still sent
		for _, i := range kept {
			if _, left := out[i]; !left && !all[i].doc {
				sent = append(sent, i)
			}
		}
		if len(sent) > models.ManyImages {
			for _, i := range sent {
				if tooLarge(all[i].image) {
					out[i] = manyLeftOut
				}
			}
		}
	}
	if len(out) == 0 {
		return messages
	}
	messages = slices.Clone(messages)
	copied := map[[2]int]bool{} // the contents copied: of a message (block -1) or a toolResult block
	for i, md := range all {
		why, ok := out[i]
		if !ok {
			continue
		}
		msg := &messages[md.msg]
		if !copied[[2]int{md.msg, -1}] {
			msg.Content, copied[[2]int{md.msg, -1}] = slices.Clone(msg.Content), true
		}
		info := md.info
		info.LeftOut = why
		if md.inner < 0 {
			msg.Content[md.block] = &types.ContentBlockMemberText{Value: info.String()}
			continue
		}
		tr := msg.Content[md.block].(*types.ContentBlockMemberToolResult)
		if !copied[[2]int{md.msg, md.block}] {
			v := tr.Value
			v.Content = slices.Clone(v.Content)
			tr = &types.ContentBlockMemberToolResult{Value: v}
			msg.Content[md.block], copied[[2]int{md.msg, md.block}] = tr, true
		}
		tr.Value.Content[md.inner] = &types.ToolResultContentBlockMemberText{Value: info.String()}
	}
	return messages
}

// Count counts the images and the documents of messages, at their top
// level and in toolResult blocks, as Request does.
func Count(messages []types.Message) (images, docs int) {
	for _, md := range mediaOf(messages) {
		if md.doc {
			docs++
		} else {
			images++
		}
	}
	return images, docs
}

// mediaOf lists the media of messages, oldest first: in the order of the
// messages and of their blocks, a toolResult's in the order of its content.
func mediaOf(messages []types.Message) []medium {
	var all []medium
	for n, msg := range messages {
		for k, b := range msg.Content {
			switch v := b.(type) {
			case *types.ContentBlockMemberImage:
				all = append(all, medium{msg: n, block: k, inner: -1, info: imageInfo(v.Value), image: v.Value})
			case *types.ContentBlockMemberDocument:
				all = append(all, medium{msg: n, block: k, inner: -1, doc: true, info: documentInfo(v.Value)})
			case *types.ContentBlockMemberToolResult:
				for i, c := range v.Value.Content {
					switch w := c.(type) {
					case *types.ToolResultContentBlockMemberImage:
						all = append(all, medium{msg: n, block: k, inner: i, info: imageInfo(w.Value), image: w.Value})
					case *types.ToolResultContentBlockMemberDocument:
						all = append(all, medium{msg: n, block: k, inner: i, doc: true, info: documentInfo(w.Value)})
					}
				}
			}
		}
	}
	return all
}

// imageInfo describes an image block for its placeholder.
func imageInfo(img types.ImageBlock) Info {
	return Info{Type: imageType(img.Format), Size: sourceSize(img.Source)}
}

// documentInfo describes a document block for its placeholder.
func documentInfo(doc types.DocumentBlock) Info {
	return Info{Type: documentType(doc.Format), Size: sourceSize(doc.Source)}
}
