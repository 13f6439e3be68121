package models

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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
		{"q3_report.v2.pdf", "q3 report v2"},
		{"  my   notes (draft) [1].md", "my notes (draft) [1]"},
		{"tab\there\nand\r\nthere", "tab here and there"},
		{"John's report #2.docx", "John s report 2"},
		{"日本語.txt", ""},
		{".pdf", "pdf"},
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
		"under_score":            false,
		strings.Repeat("a", 201): false,
	} {
		assert.Equal(t, ok, DocumentNameOK(name), "%q", name)
	}
}

func TestImageSize(t *testing.T) {
	_, _, known, err := ImageSize("webp", []byte("RIFF"))
	assert.False(t, known)
	assert.NoError(t, err)
	_, _, known, err = ImageSize("gif", []byte("GIF89a"))
	assert.True(t, known)
	assert.Error(t, err)
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
