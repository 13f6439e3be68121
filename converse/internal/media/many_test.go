package media

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"

	"github.com/tooluse/bedrock/converse/internal/models"
	"github.com/tooluse/bedrock/converse/internal/testimage"
)

func TestRequestManyImages(t *testing.T) {
	pngImg := func(w, h int) types.ImageBlock {
		return types.ImageBlock{Format: types.ImageFormatPng, Source: &types.ImageSourceMemberBytes{Value: testimage.Plain(t, w, h)}}
	}
	small, large := pngImg(10, 10), pngImg(2001, 10)
	inResult := func(b types.ImageBlock) types.ToolResultContentBlock {
		return &types.ToolResultContentBlockMemberImage{Value: b}
	}
	user := func(blocks ...types.ContentBlock) types.Message {
		return types.Message{Role: types.ConversationRoleUser, Content: blocks}
	}
	claude, nova := models.Parse("anthropic.claude-sonnet-4-5-20250929-v1:0"), models.Parse("amazon.nova-pro-v1:0")
	// history: a prompt with a large image, then 19 small images in results.
	history := func() []types.Message {
		return []types.Message{
			user(&types.ContentBlockMemberImage{Value: large}, &types.ContentBlockMemberText{Value: "What is this?"}),
			user(result("t1", repeat(inResult(small), 19)...)),
		}
	}
	withLarge := func(msgs []types.Message) []types.Message {
		return append(msgs, user(result("t2", inResult(large), txt("page"))))
	}
	placeholder := "[image/png, " + sizeText(len(large.Source.(*types.ImageSourceMemberBytes).Value)) + ": left out, a request of more than 20 images takes none larger than 2000 px a side]"

	t.Run("20 images", func(t *testing.T) {
		msgs := history()
		assert.Equal(t, msgs, Request(claude, msgs))
		assert.False(t, BreaksManyImages(claude, msgs))
	})
	t.Run("21 images, Claude", func(t *testing.T) {
		msgs := withLarge(history())
		before := withLarge(history())
		assert.True(t, BreaksManyImages(claude, msgs))
		got := Request(claude, msgs)
		assert.False(t, BreaksManyImages(claude, got))
		assert.Equal(t, before, msgs, "no message of messages is written")
		assert.Equal(t, &types.ContentBlockMemberText{Value: placeholder}, got[0].Content[0], "the prompt's large image")
		assert.Equal(t, msgs[0].Content[1], got[0].Content[1])
		assert.Equal(t, msgs[1], got[1], "small images stay")
		assert.Equal(t, [][]string{{"text:" + placeholder, "text:page"}}, results(got[2].Content))
	})
	t.Run("21 images, not Claude", func(t *testing.T) {
		msgs := withLarge(history())
		assert.Equal(t, msgs, Request(nova, msgs))
		assert.False(t, BreaksManyImages(nova, msgs))
	})
}
