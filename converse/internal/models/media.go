package models

import (
	"bytes"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
)

// Bedrock's limits on the media of one message, from the Converse API
// reference (Message.content, as the SDK's types.Message documents it): at
// most 20 images of at most 3.75 MB, 8,000 × 8,000 px each, and at most 5
// documents of at most 4.5 MB each. MB is read as 10^6 bytes, the smaller
// reading, so that what passes here passes there.
const (
	MaxImages        = 20
	MaxImageBytes    = 3_750_000
	MaxImagePixels   = 8000
	MaxDocuments     = 5
	MaxDocumentBytes = 4_500_000
	// MaxDocumentName is the longest document name Bedrock takes; the API
	// reference gives no number, the limit is that of other Bedrock
	// clients (a guess).
	MaxDocumentName = 200
)

// Claude's rule for a request of many images, from Anthropic's vision
// guide ("Before you upload"): in a request of more than ManyImages
// images, each is at most ManyImagePixels × ManyImagePixels.
const (
	ManyImages      = 20
	ManyImagePixels = 2000
)

// The input tokens of an image, from Anthropic's vision guide: "An image
// uses approximately width * height / 750 tokens", after an image larger
// than the model's maximum is scaled down to it ("For Claude Opus 4.7: 4784
// tokens, and at most 2576 pixels on the long edge. For other models: 1568
// tokens, and at most 1568 pixels on the long edge."). Estimates take the
// largest maximum, so that they are at or above any model's count.
const (
	imageTokenPixels = 750
	MaxImageEdge     = 2576
	MaxImageTokens   = 4784
)

// ImageTokens estimates the input tokens of an image of width × height
// pixels; an image whose size is not known (0 × 0) is MaxImageTokens.
func ImageTokens(width, height int) int {
	if width <= 0 || height <= 0 {
		return MaxImageTokens
	}
	w, h := float64(width), float64(height)
	if long := max(w, h); long > MaxImageEdge {
		w, h = w*MaxImageEdge/long, h*MaxImageEdge/long
	}
	return min(int(w*h/imageTokenPixels)+1, MaxImageTokens)
}

// PDFPageTokens estimates the input tokens of a page of a PDF, which
// Claude reads as the page's text and the page as an image (Anthropic's
// PDF support guide: "Each page typically uses 1,500-3,000 tokens per
// page depending on content density", besides "image-based costs"): the
// most text, and an image of the common maximum, 1,568 tokens.
const PDFPageTokens = 3000 + 1568

// PDFPages counts the pages of a PDF by its page objects (/Type /Page,
// not /Pages); 0 when it finds none, as in a PDF whose objects are all in
// compressed object streams.
func PDFPages(data []byte) int {
	n := 0
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte("/Type"))
		if j < 0 {
			return n
		}
		i += j + len("/Type")
		rest := bytes.TrimLeft(data[i:], " \t\r\n")
		if after, ok := bytes.CutPrefix(rest, []byte("/Page")); ok && (len(after) == 0 || !isNameChar(after[0])) {
			n++
		}
	}
}

// isNameChar reports whether c may continue a PDF name (/Page versus
// /Pages): anything but white space and delimiters.
func isNameChar(c byte) bool {
	return !bytes.ContainsRune([]byte(" \t\r\n\f\x00()<>[]{}/%"), rune(c))
}

// CapsManyImages reports whether the model takes a request of more than
// ManyImages images only with each at most ManyImagePixels a side: Claude.
func (m Model) CapsManyImages() bool {
	return m.Provider == "anthropic"
}

// Media says which media a toolResult block may hold for a model.
type Media struct {
	Images    bool
	Documents bool
}

// ToolResultMedia reports which media the model takes inside a toolResult
// block. The sources, in the Amazon Bedrock documentation:
//
//   - ToolResultContentBlock (API reference, and the SDK's
//     types.ToolResultContentBlockMemberImage): "This field is only
//     supported by Amazon Nova and Anthropic Claude 3 and 4 models."
//   - "Supported models and model features" (user guide,
//     conversation-inference-supported-models-features): Claude 3.5 Haiku
//     and Nova Micro have no vision; Nova Micro no document chat.
//   - Amazon Nova user guide, "Returning tool results": the content of a
//     toolResult "should be either a single JSON or a mix of text and
//     images", so Nova gets no documents in tool results.
//   - Claude takes documents inside a toolResult (and rejects them beside
//     it): github.com/pydantic/pydantic-ai issues 3253 and 6081.
//
// Every other family, and a model the ID does not name, takes none.
func (m Model) ToolResultMedia() Media {
	switch {
	case m.Provider == "anthropic" && modernClaude(m.Name):
		return Media{Images: !strings.HasPrefix(m.Name, "claude-3-5-haiku"), Documents: true}
	case m.Provider == "amazon" && strings.HasPrefix(m.Name, "nova") && !strings.HasPrefix(m.Name, "nova-micro"):
		return Media{Images: true}
	}
	return Media{}
}

// ImageSize reads the width and height of a png, jpeg or gif image from its
// header. ok is false for another format (webp, whose size is not read) and
// err is set for bytes that are not an image of the format.
func ImageSize(format string, data []byte) (width, height int, ok bool, err error) {
	var decode func(r *bytes.Reader) (image.Config, error)
	switch format {
	case "png":
		decode = func(r *bytes.Reader) (image.Config, error) { return png.DecodeConfig(r) }
	case "jpeg":
		decode = func(r *bytes.Reader) (image.Config, error) { return jpeg.DecodeConfig(r) }
	case "gif":
		decode = func(r *bytes.Reader) (image.Config, error) { return gif.DecodeConfig(r) }
	default:
		return 0, 0, false, nil
	}
	cfg, err := decode(bytes.NewReader(data))
	if err != nil {
		return 0, 0, true, err
	}
	return cfg.Width, cfg.Height, true, nil
}

// DocumentNameOK reports whether Bedrock takes name as a document's name:
// 1 to MaxDocumentName characters, ASCII letters and digits, single spaces,
// hyphens, parentheses and square brackets (types.DocumentBlock.Name).
func DocumentNameOK(name string) bool {
	if name == "" || len(name) > MaxDocumentName {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case nameChar(c):
		case c == ' ' && (i == 0 || name[i-1] != ' '):
		default:
			return false
		}
	}
	return true
}

// nameChar reports whether c may appear in a document name, apart from a
// space.
func nameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("-()[]", c) >= 0
}

// CleanDocumentName makes a name Bedrock takes of name: a file extension
// dropped (a dot is not allowed), every other character that is not allowed
// and every run of whitespace made one space, trimmed and cut to
// MaxDocumentName. It returns "" when nothing is left.
func CleanDocumentName(name string) string {
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	var b strings.Builder
	space := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !nameChar(c) {
			space = b.Len() > 0
			continue
		}
		if space {
			if b.Len()+2 > MaxDocumentName {
				break
			}
			b.WriteByte(' ')
			space = false
		}
		if b.Len() == MaxDocumentName {
			break
		}
		b.WriteByte(c)
	}
	return b.String()
}
