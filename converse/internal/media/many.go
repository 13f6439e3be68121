package media

import (
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/models"
)

// manyLeftOut says why Request left an image out for Claude's rule for
// many images.
const manyLeftOut = "a request of more than 20 images takes none larger than 2000 px a side"

// BreaksManyImages reports whether messages, those of a request to m,
// break Claude's rule for many images that Request keeps (see
// models.Model.CapsManyImages).
func BreaksManyImages(m models.Model, messages []types.Message) bool {
	if !m.CapsManyImages() {
		return false
	}
	n, large := 0, false
	for _, md := range mediaOf(messages) {
		if !md.doc {
			n++
			large = large || tooLarge(md.image)
		}
	}
	return n > models.ManyImages && large
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
