package models

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/image/webp"
)

// Bedrock's limits on the media of one message, from the Converse API
// reference (Message.content, as the SDK's types.Message documents it). A
// message holds at most 20 images of at most 3.75 MB, 8,000 × 8,000 px each.
// It holds at most 5 documents of at most 4.5 MB each. MB is read as 10^6
// bytes, the smaller reading, so that what passes here passes there.
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

// Bedrock's limits on the media of a whole request, over all its messages.
// MaxRequestDocuments is from AWS's "API restrictions" page of the Bedrock
// user guide (inference-api-restrictions): "You can include up to 5
// documents per request". For Claude, see Model.MaxRequestMedia.
const (
	MaxRequestDocuments = 5
	claudeRequestMedia  = 100
)

// Claude's rule for a request of many images, from Anthropic's vision guide
// ("Before you upload"): in a request of more than ManyImages images, each is
// at most ManyImagePixels × ManyImagePixels. On Bedrock: "image exceed max
// allowed size for many-image requests: 2000 pixels"
// (aws-solutions-library-samples/accelerated-intelligent-document-processing-on-aws
// pull 998, September 2026, a request of 29 page images).
const (
	ManyImages      = 20
	ManyImagePixels = 2000
)

// The input tokens of an image, from Anthropic's vision guide: "An image
// uses approximately width * height / 750 tokens". An image larger than
// the model's maximum is first scaled down to it. The guide gives the
// maximums: "For Claude Opus 4.7: 4784 tokens, and at most 2576 pixels on
// the long edge. For other models: 1568 tokens, and at most 1568 pixels on
// the long edge." Estimates take the largest maximum, so that they are at
// or above any model's count.
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

// PDFPageTokens estimates the input tokens of a page of a PDF. Claude
// reads the page's text, and the page as an image. Anthropic's PDF support
// guide says "Each page typically uses 1,500-3,000 tokens per page
// depending on content density", besides "image-based costs". The
// estimate is the most text plus an image of the common maximum, 1,568
// tokens.
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

// MaxRequestMedia is the most images and documents together that the
// model takes in a request, over all its messages, or 0 for no such limit.
// Claude takes 100. Anthropic's vision guide says "100 per request on the
// API, for models with a 200k-token context window". On Bedrock, Kiro's
// users report "too many images and documents: 101 + 0 > 100". (In 2025
// Bedrock answered "21 + 0 > 20": cline/cline issue 1844, boto/boto3 issue
// 4632. A request of 29 images is taken in 2026:
// aws-solutions-library-samples pull 998. So the limit of 20 is taken as
// gone.)
func (m Model) MaxRequestMedia() int {
	if m.Provider == "anthropic" {
		return claudeRequestMedia
	}
	return 0
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

// imageMagic are the first bytes of an image of each format Bedrock takes;
// a webp file starts with "RIFF", its length and "WEBP" (see whole).
var imageMagic = []struct{ format, magic string }{
	{"png", "\x89PNG\r\n\x1a\n"}, {"jpeg", "\xff\xd8\xff"}, {"gif", "GIF87a"}, {"gif", "GIF89a"},
}

// ImageFormat names the format of an image from its first bytes, its magic
// number: "png", "jpeg", "gif" or "webp", or "" for none of them.
func ImageFormat(data []byte) string {
	if len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP" {
		return "webp"
	}
	for _, m := range imageMagic {
		if bytes.HasPrefix(data, []byte(m.magic)) {
			return m.format
		}
	}
	return ""
}

// whole reports whether data, an image of format whose header reads, is
// whole, and if not, what is missing. That is png's IEND chunk (its type
// and CRC), jpeg's end-of-image marker after its first scan (jpegScan), or
// gif's trailer. Bytes after them (some cameras append data to a jpeg) are
// allowed. A webp file is whole when it is as long as its RIFF header says:
// its size is read from its first chunk alone, which a cut file still has.
func whole(format string, data []byte) (bool, string) {
	switch format {
	case "webp":
		return len(data) >= 8 && int64(binary.LittleEndian.Uint32(data[4:8]))+8 <= int64(len(data)), "shorter than its header says"
	case "png":
		return bytes.Contains(data, []byte("IEND\xaeB`\x82")), "no IEND chunk"
	case "jpeg":
		scan := jpegScan(data)
		return scan > 0 && bytes.Contains(data[scan:], []byte{0xff, 0xd9}), "no end-of-image marker after its scan"
	case "gif":
		return bytes.HasSuffix(bytes.TrimRight(data, "\x00"), []byte(";")), "no trailer at its end"
	}
	return true, ""
}

// jpegScan returns where the first scan of a jpeg starts (its SOS
// marker), or 0. The segments after the SOI marker are walked by their
// lengths. That skips an EXIF thumbnail, whose own scan and end-of-image
// marker sit inside an APP1 segment. In the scans' coded data a
// 0xFF byte is always followed by 0x00 or a restart marker, so the first
// end-of-image marker after this point is the image's (ITU T.81, B.1.1).
func jpegScan(data []byte) int {
	i := 2 // past SOI
	for i+1 < len(data) {
		if data[i] != 0xff {
			return 0
		}
		switch m := data[i+1]; {
		case m == 0xff: // fill
			i++
		case m == 0xda:
			return i
		case m == 0x01 || m >= 0xd0 && m <= 0xd8: // TEM, RSTn and SOI: no length
			i += 2
		default:
			if i+3 >= len(data) {
				return 0
			}
			i += 2 + (int(data[i+2])<<8 | int(data[i+3]))
		}
	}
	return 0
}

// ImageSize reads the width and height of a png, jpeg, gif or webp image
// from its header, and checks its last bytes, cheaply, without decoding
// it. ok is false for another format. err is set for bytes that are not a
// whole image of the format. Its text says so, as a placeholder shows it:
// "not a readable png image", "a truncated png image, no IEND chunk".
func ImageSize(format string, data []byte) (width, height int, ok bool, err error) {
	var decode func(r *bytes.Reader) (image.Config, error)
	switch format {
	case "png":
		decode = func(r *bytes.Reader) (image.Config, error) { return png.DecodeConfig(r) }
	case "jpeg":
		decode = func(r *bytes.Reader) (image.Config, error) { return jpeg.DecodeConfig(r) }
	case "gif":
		decode = func(r *bytes.Reader) (image.Config, error) { return gif.DecodeConfig(r) }
	case "webp":
		decode = readWebPSize
	default:
		return 0, 0, false, nil
	}
	cfg, err := decode(bytes.NewReader(data))
	if err != nil {
		return 0, 0, true, errors.New("not a readable " + format + " image")
	}
	if ok, what := whole(format, data); !ok {
		return 0, 0, true, errors.New("a truncated " + format + " image, " + what)
	}
	return cfg.Width, cfg.Height, true, nil
}

// readWebPSize reads a webp's canvas size with x/image/webp, which reads a
// lossy frame that is no key frame as 0 × 0 without an error.
func readWebPSize(r *bytes.Reader) (image.Config, error) {
	cfg, err := webp.DecodeConfig(r)
	if err == nil && (cfg.Width == 0 || cfg.Height == 0) {
		err = errors.New("a webp of no pixels")
	}
	return cfg, err
}

// documentMagic are the first bytes of a document of each binary format
// Bedrock takes: a PDF's header; docx and xlsx are zip archives, doc and
// xls OLE compound files.
var documentMagic = map[string]string{
	"pdf": "%PDF-", "docx": "PK\x03\x04", "xlsx": "PK\x03\x04", "doc": "\xd0\xcf\x11\xe0", "xls": "\xd0\xcf\x11\xe0",
}

// DocumentProblem says why data is not a document of format, or "".
// format is a Bedrock document format (pdf, csv, doc, docx, html, md, txt,
// xls, xlsx). It reports data that is empty, as Bedrock takes bytes of
// length 1 or more. It reports a binary format that does not start as its
// files do (documentMagic), and a text format that is not UTF-8. Only the
// first bytes of a binary format are read, not the whole document.
func DocumentProblem(format string, data []byte) string {
	switch magic, isBinary := documentMagic[format]; {
	case len(data) == 0:
		return "empty"
	case isBinary && !bytes.HasPrefix(data, []byte(magic)):
		return "not a " + format + " document"
	case !isBinary && !utf8.Valid(data):
		return "not UTF-8 text"
	}
	return ""
}

// DocumentNameOK reports whether Bedrock takes name as a document's name:
// 1 to MaxDocumentName characters, ASCII letters and digits, single spaces,
// hyphens, underscores, parentheses and square brackets
// (types.DocumentBlock.Name, and nameChar).
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
// space. The API reference leaves the underscore out, but Bedrock takes it.
// A captured Converse request of Claude with a document named
// "company_policy" was answered. The sources are langchain-aws's test
// cassettes, vercel/ai pull 20366 ("checked live") and
// aws-samples/generative-ai-use-cases issue 1671.
func nameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("-()[]_", c) >= 0
}

// documentExtensions are the file extensions of Bedrock's document
// formats, which CleanDocumentName drops.
var documentExtensions = []string{"pdf", "csv", "doc", "docx", "xls", "xlsx", "html", "htm", "txt", "md"}

// CleanDocumentName makes a name Bedrock takes of name. It drops the
// extension of a document format (documentExtensions, in any case). Every
// run of other characters that are not allowed, dots and whitespace among
// them, becomes one space. The name is trimmed and cut to
// MaxDocumentName. It returns "" when nothing is left.
func CleanDocumentName(name string) string {
	if i := strings.LastIndexByte(name, '.'); i > 0 && slices.Contains(documentExtensions, strings.ToLower(name[i+1:])) {
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
