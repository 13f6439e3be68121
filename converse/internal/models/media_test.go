package models

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/internal/testimage"
)

func TestToolResultMedia(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want Media
	}{
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", Media{Images: true, Documents: true}},
		{"anthropic.claude-3-haiku-20240307-v1:0", Media{Images: true, Documents: true}},
		{"anthropic.claude-3-5-haiku-20241022-v1:0", Media{Documents: true}},
		{"anthropic.claude-v2:1", Media{}},
		{"us.amazon.nova-pro-v1:0", Media{Images: true}},
		{"us.amazon.nova-micro-v1:0", Media{}},
		{"amazon.titan-text-premier-v1:0", Media{}},
		{"meta.llama3-2-90b-instruct-v1:0", Media{}},
		{"mistral.pixtral-large-2502-v1:0", Media{}},
		{"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/x", Media{}},
	} {
		assert.Equal(t, tc.want, Parse(tc.id).ToolResultMedia(), tc.id)
	}
}

func TestCleanDocumentName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"report.pdf", "report"},
		{"q3_report.v2.pdf", "q3_report v2"},
		{"  my   notes (draft) [1].md", "my notes (draft) [1]"},
		{"tab\there\nand\r\nthere", "tab here and there"},
		{"John's report #2.docx", "John s report 2"},
		{"日本語.txt", ""},
		{".pdf", "pdf"},
		{"v1.2 release notes", "v1 2 release notes"},
		{"Dr. Smith referral", "Dr Smith referral"},
		{"REPORT.PDF", "REPORT"},
		{"page.htm", "page"},
		{"archive.tar.gz", "archive tar gz"},
		{strings.Repeat("ab ", 100), strings.TrimSpace(strings.Repeat("ab ", 67)[:200])},
	} {
		got := CleanDocumentName(tc.in)
		assert.Equal(t, tc.want, got, tc.in)
		if got != "" {
			assert.True(t, DocumentNameOK(got), "%q is a name Bedrock takes", got)
		}
	}
}

func TestDocumentNameOK(t *testing.T) {
	for name, ok := range map[string]bool{
		"report":                 true,
		"my notes (v2) [a]":      true,
		"a-b":                    true,
		"":                       false,
		"report.pdf":             false,
		"two  spaces":            false,
		"tab\there":              false,
		"under_score":            true, // Bedrock takes it, though its reference leaves it out
		"company_policy":         true,
		strings.Repeat("a", 201): false,
	} {
		assert.Equal(t, ok, DocumentNameOK(name), "%q", name)
	}
}

func TestImageFormat(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"png", testimage.Plain(t, 2, 2), "png"},
		{"jpeg", testimage.JPEG(t, 2, 2), "jpeg"},
		{"gif", testimage.GIF(t, 2, 2), "gif"},
		{"webp", testimage.WebP(2, 2), "webp"},
		{"a RIFF that is no webp", []byte("RIFF\x04\x00\x00\x00WAVE"), ""},
		{"text", []byte("hello"), ""},
		{"empty", nil, ""},
	} {
		assert.Equal(t, tc.want, ImageFormat(tc.data), tc.name)
	}
}

// withThumbnail is jpg with an APP1 segment after its SOI holding a
// thumbnail's own scan and end-of-image markers, as EXIF puts one.
func withThumbnail(jpg []byte) []byte {
	thumb := []byte("Exif\x00\x00\xff\xd8\xff\xda\x00\x02\x01\xff\xd9")
	app1 := append([]byte{0xff, 0xe1, 0, byte(len(thumb) + 2)}, thumb...)
	return slices.Concat(jpg[:2], app1, jpg[2:])
}

func TestImageSize(t *testing.T) {
	png, jpg, gif := testimage.Plain(t, 30, 20), testimage.JPEG(t, 30, 20), testimage.GIF(t, 30, 20)
	// riff wraps a webp's first chunk, of type typ, in its RIFF header.
	riff := func(typ string, chunk ...byte) []byte {
		size := uint32(4 + 8 + len(chunk))
		b := append([]byte("RIFF"), byte(size), byte(size>>8), byte(size>>16), byte(size>>24))
		b = append(append(b, "WEBP"+typ...), byte(len(chunk)), 0, 0, 0)
		return append(b, chunk...)
	}
	// 30 × 20: VP8's 14-bit fields after its start code hold the size;
	// VP8L's 32 bits after its signature width - 1 and height - 1, 14 bits
	// each.
	vp8 := riff("VP8 ", 0, 0, 0, 0x9d, 0x01, 0x2a, 30, 0, 20, 0)
	vp8l := riff("VP8L", 0x2f, 0x1d, 0xc0, 0x04, 0, 0, 0, 0, 0, 0) // 29 | 19<<14
	for _, tc := range []struct {
		name, format string
		data         []byte
		w, h         int
		err          string
	}{
		{"png", "png", png, 30, 20, ""},
		{"jpeg", "jpeg", jpg, 30, 20, ""},
		{"gif", "gif", gif, 30, 20, ""},
		{"webp, extended", "webp", testimage.WebP(9000, 300), 9000, 300, ""},
		{"webp, lossy", "webp", vp8, 30, 20, ""},
		{"webp, lossless", "webp", vp8l, 30, 20, ""},
		{"jpeg with bytes after its end, as some cameras write", "jpeg", append(slices.Clone(jpg), "SEFH trailer"...), 30, 20, ""},
		{"jpeg with a video after its end, a scan marker in it", "jpeg", append(slices.Clone(jpg), "ftypmp42\x00\x00\xff\xda\x01\x02"...), 30, 20, ""},
		{"jpeg cut in its scan, a thumbnail's end marker before it", "jpeg", withThumbnail(jpg)[:len(withThumbnail(jpg))-2], 0, 0, "a truncated jpeg image, no end-of-image marker after its scan"},
		{"jpeg with a thumbnail", "jpeg", withThumbnail(jpg), 30, 20, ""},
		{"png with bytes after its end", "png", append(slices.Clone(png), 0, 0), 30, 20, ""},
		{"png cut after its header", "png", png[:40], 0, 0, "a truncated png image, no IEND chunk"},
		{"jpeg without its end", "jpeg", jpg[:len(jpg)-2], 0, 0, "a truncated jpeg image, no end-of-image marker after its scan"},
		{"gif without its trailer", "gif", gif[:len(gif)-1], 0, 0, "a truncated gif image, no trailer at its end"},
		{"webp shorter than its header says", "webp", testimage.WebP(8, 8)[:29], 0, 0, "not a readable webp image"},
		{"webp shorter than its RIFF length", "webp", append(testimage.WebP(8, 8)[:4], append([]byte{23}, testimage.WebP(8, 8)[5:]...)...), 0, 0, "a truncated webp image, shorter than its header says"},
		{"png bytes as webp", "webp", png, 0, 0, "not a readable webp image"},
		{"a webp of an unknown chunk", "webp", riff("ALPH", make([]byte, 10)...), 0, 0, "not a readable webp image"},
		{"a lossy webp whose frame is no key frame", "webp", riff("VP8 ", 1, 0, 0, 0x9d, 0x01, 0x2a, 30, 0, 20, 0), 0, 0, "not a readable webp image"},
		{"an extended webp whose VP8X chunk is not 10 bytes", "webp", riff("VP8X", make([]byte, 12)...), 0, 0, "not a readable webp image"},
		{"a gif header alone", "gif", []byte("GIF89a"), 0, 0, "not a readable gif image"},
		{"empty", "png", nil, 0, 0, "not a readable png image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, h, known, err := ImageSize(tc.format, tc.data)
			assert.True(t, known)
			if tc.err != "" {
				assert.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, [2]int{tc.w, tc.h}, [2]int{w, h})
		})
	}
	_, _, known, err := ImageSize("bmp", png)
	assert.False(t, known, "a format Bedrock does not take")
	assert.NoError(t, err)
}

func TestDocumentProblem(t *testing.T) {
	for _, tc := range []struct {
		format, data, want string
	}{
		{"pdf", "%PDF-1.7 ...", ""},
		{"pdf", "<html>404 not found</html>", "not a pdf document"},
		{"pdf", "%PDF", "not a pdf document"},
		{"docx", "PK\x03\x04rest", ""},
		{"xlsx", "PK\x03\x04rest", ""},
		{"docx", "{\\rtf1", "not a docx document"},
		{"doc", "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", ""},
		{"xls", "PK\x03\x04", "not a xls document"},
		{"txt", "plain text", ""},
		{"md", "# héllo", ""},
		{"csv", "a,\xff\n", "not UTF-8 text"},
		{"html", "<p>\xe9</p>", "not UTF-8 text"},
		{"txt", "", "empty"},
		{"pdf", "", "empty"},
	} {
		assert.Equal(t, tc.want, DocumentProblem(tc.format, []byte(tc.data)), "%s %q", tc.format, tc.data)
	}
}

func TestMaxRequestMedia(t *testing.T) {
	assert.Equal(t, 100, Parse("us.anthropic.claude-sonnet-4-5-20250929-v1:0").MaxRequestMedia())
	assert.Zero(t, Parse("us.amazon.nova-pro-v1:0").MaxRequestMedia())
}

func TestImageTokens(t *testing.T) {
	for _, tc := range []struct {
		w, h, want int
	}{
		{200, 200, 54},     // the vision guide's table: ~54
		{1000, 1000, 1334}, // ~1334
		{1092, 1092, 1590}, // ~1590
		{2576, 1000, 3435}, // at the largest edge, not scaled
		{5152, 2000, 3435}, // scaled to 2576 × 1000
		{4000, 4000, MaxImageTokens},
		{0, 0, MaxImageTokens}, // a size not known
	} {
		assert.Equal(t, tc.want, ImageTokens(tc.w, tc.h), "%d × %d", tc.w, tc.h)
	}
}

func TestPDFPages(t *testing.T) {
	for _, tc := range []struct {
		name string
		pdf  string
		want int
	}{
		{"pages and their tree", "1 0 obj << /Type /Pages /Kids [2 0 R 3 0 R] >> 2 0 obj << /Type /Page >> 3 0 obj <</Type/Page/Parent 1 0 R>>", 2},
		{"a name after /Page", "<< /Type\n/Page\r\n>> << /Type /PageLabel >>", 1},
		{"at the end", "<< /Type /Page", 1},
		{"compressed object streams", "1 0 obj << /Type /ObjStm /N 5 >> stream x\x9c endstream", 0},
		{"none", "", 0},
	} {
		assert.Equal(t, tc.want, PDFPages([]byte(tc.pdf)), tc.name)
	}
}
