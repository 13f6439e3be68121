package media

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/internal/models"
	"github.com/tooluse/bedrock/converse/internal/testimage"
	"github.com/tooluse/bedrock/tools"
)

// describe says what content holds, a block a word: "text:…",
// "image:png:<bytes>", "document:pdf:<name>:<bytes>".
func describe(content []types.ToolResultContentBlock) []string {
	var out []string
	for _, c := range content {
		switch v := c.(type) {
		case *types.ToolResultContentBlockMemberText:
			out = append(out, "text:"+v.Value)
		case *types.ToolResultContentBlockMemberImage:
			out = append(out, fmt.Sprintf("image:%s:%d", v.Value.Format, sourceSize(v.Value.Source)))
		case *types.ToolResultContentBlockMemberDocument:
			out = append(out, fmt.Sprintf("document:%s:%s:%d", v.Value.Format, aws.ToString(v.Value.Name), sourceSize(v.Value.Source)))
		default:
			out = append(out, fmt.Sprintf("%T", c))
		}
	}
	return out
}

// results describes the toolResult blocks of content, one list each.
func results(content []types.ContentBlock) [][]string {
	var out [][]string
	for _, b := range content {
		if tr, ok := b.(*types.ContentBlockMemberToolResult); ok {
			out = append(out, describe(tr.Value.Content))
		}
	}
	return out
}

func result(id string, content ...types.ToolResultContentBlock) types.ContentBlock {
	return &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String(id), Content: content}}
}

func img(n int) types.ToolResultContentBlock {
	return &types.ToolResultContentBlockMemberImage{Value: types.ImageBlock{
		Format: types.ImageFormatJpeg, Source: &types.ImageSourceMemberBytes{Value: make([]byte, n)}}}
}

func doc(name string) types.ToolResultContentBlock {
	return &types.ToolResultContentBlockMemberDocument{Value: types.DocumentBlock{
		Format: types.DocumentFormatTxt, Name: aws.String(name), Source: &types.DocumentSourceMemberBytes{Value: []byte("x")}}}
}

func txt(s string) types.ToolResultContentBlock {
	return &types.ToolResultContentBlockMemberText{Value: s}
}

func repeat(b types.ToolResultContentBlock, n int) []types.ToolResultContentBlock {
	out := make([]types.ToolResultContentBlock, n)
	for i := range out {
		out[i] = b
	}
	return out
}

func TestInfoString(t *testing.T) {
	for _, tc := range []struct {
		info Info
		want string
	}{
		{Info{Type: "image/png", Size: 0}, "[image/png, 0 B]"},
		{Info{Type: "image/png", Size: 1023}, "[image/png, 1023 B]"},
		{Info{Type: "image/png", Size: 1024}, "[image/png, 1 KiB]"},
		{Info{Type: "image/png", Size: 1535}, "[image/png, 1 KiB]"},
		{Info{Type: "image/png", Size: 1536}, "[image/png, 2 KiB]"},
		{Info{Type: "application/pdf", Size: 3 << 20}, "[application/pdf, 3.0 MiB]"},
		{Info{Type: "text/plain", Name: "notes", Size: 2048, LeftOut: "why"}, "[text/plain, 2 KiB: left out, why]"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.info.String())
		})
	}
}

func TestContent(t *testing.T) {
	small, wide, huge := testimage.Plain(t, 10, 10), testimage.Plain(t, models.MaxImagePixels+1, 1), make([]byte, models.MaxImageBytes+1)
	jpg := testimage.JPEG(t, 4, 4)
	claude := &Rules{ModelID: "claude", Kinds: models.Media{Images: true, Documents: true}}
	nova := &Rules{ModelID: "nova", Kinds: models.Media{Images: true}}
	llama := &Rules{ModelID: "llama"}
	pdf := func(name string) tools.Media {
		return tools.Media{Type: "application/pdf", Name: name, Data: []byte("%PDF-")}
	}
	for _, tc := range []struct {
		name   string
		rules  *Rules
		media  []tools.Media
		want   []string
		infos  []Info // when set, the infos expected
		leftOf []string
	}{{
		name:  "an image and a document, no rules",
		media: []tools.Media{{Type: "image/png", Data: small}, pdf("q3_report.v2.pdf")},
		want:  []string{fmt.Sprintf("image:png:%d", len(small)), "document:pdf:q3_report v2:5"},
		infos: []Info{{Type: "image/png", Size: len(small)}, {Type: "application/pdf", Name: "q3_report v2", Size: 5}},
	}, {
		name:  "a media type with parameters, in capitals",
		rules: claude,
		media: []tools.Media{{Type: "IMAGE/PNG; charset=binary", Data: small}, {Type: " Text/Plain ", Data: []byte("x")}},
		want:  []string{fmt.Sprintf("image:png:%d", len(small)), "document:txt:document 1:1"},
	}, {
		name:  "unnamed documents numbered among the documents",
		rules: claude,
		media: []tools.Media{pdf(""), {Type: "image/png", Data: small}, pdf("..."), pdf("named")},
		want:  []string{"document:pdf:document 1:5", fmt.Sprintf("image:png:%d", len(small)), "document:pdf:document 2:5", "document:pdf:named:5"},
	}, {
		name:  "Nova takes no documents",
		rules: nova,
		media: []tools.Media{{Type: "image/png", Data: small}, pdf("r")},
		want:  []string{fmt.Sprintf("image:png:%d", len(small)), "text:[application/pdf, 5 B: left out, model nova takes no documents in tool results]"},
	}, {
		name:  "a model that takes no media",
		rules: llama,
		media: []tools.Media{{Type: "image/png", Data: small}},
		want:  []string{fmt.Sprintf("text:[image/png, %d B: left out, model llama takes no images in tool results]", len(small))},
	}, {
		name:  "Bedrock's limits",
		media: []tools.Media{{Type: "image/png", Data: wide}, {Type: "image/jpeg", Data: huge}, {Type: "image/gif", Data: []byte("GIF?")}, {Type: "text/csv", Data: make([]byte, models.MaxDocumentBytes+1)}},
		want: []string{
			fmt.Sprintf("text:[image/png, %d B: left out, 8001×1 px, more than Bedrock's limit of 8000 px a side]", len(wide)),
			"text:[image/jpeg, 3.6 MiB: left out, larger than Bedrock's limit of 3.75 MB for an image]",
			"text:[image/gif, 4 B: left out, not a readable gif image]",
			"text:[text/csv, 4.3 MiB: left out, larger than Bedrock's limit of 4.5 MB for a document]",
		},
	}, {
		name:  "webp images, read",
		media: []tools.Media{{Type: "image/webp", Data: testimage.WebP(10, 10)}, {Type: "image/webp", Data: testimage.WebP(9000, 10)}, {Type: "image/webp", Data: []byte("RIFF")}},
		want: []string{"image:webp:30",
			"text:[image/webp, 30 B: left out, 9000×10 px, more than Bedrock's limit of 8000 px a side]",
			"text:[image/webp, 4 B: left out, not a readable webp image]"},
	}, {
		name:  "empty media",
		rules: claude,
		media: []tools.Media{{Type: "image/png", Data: nil}, {Type: "text/plain", Name: "empty", Data: []byte{}}},
		want:  []string{"text:[image/png, 0 B: left out, empty]", "text:[text/plain, 0 B: left out, empty]"},
	}, {
		name:  "an image's format from its bytes",
		media: []tools.Media{{Type: "image/png", Data: jpg}, {Type: "image/webp", Data: small}, {Type: "image/jpg", Data: jpg}, {Type: "image/x-png", Data: small}},
		want: []string{fmt.Sprintf("image:jpeg:%d", len(jpg)), fmt.Sprintf("image:png:%d", len(small)),
			fmt.Sprintf("image:jpeg:%d", len(jpg)), fmt.Sprintf("image:png:%d", len(small))},
		infos: []Info{{Type: "image/jpeg", Size: len(jpg)}, {Type: "image/png", Size: len(small)}, {Type: "image/jpg", Size: len(jpg)}, {Type: "image/x-png", Size: len(small)}},
	}, {
		name:  "a truncated image",
		media: []tools.Media{{Type: "image/png", Data: small[:len(small)-12]}, {Type: "image/jpeg", Data: jpg[:len(jpg)-2]}},
		want: []string{fmt.Sprintf("text:[image/png, %d B: left out, a truncated png image, no IEND chunk]", len(small)-12),
			fmt.Sprintf("text:[image/jpeg, %d B: left out, a truncated jpeg image, no end-of-image marker after its scan]", len(jpg)-2)},
	}, {
		name:  "a document that is not of its format",
		media: []tools.Media{{Type: "application/pdf", Name: "r", Data: []byte("<html>404</html>")}, {Type: "text/csv", Name: "c", Data: []byte("\xff")}},
		want:  []string{"text:[application/pdf, 16 B: left out, not a pdf document]", "text:[text/csv, 1 B: left out, not UTF-8 text]"},
	}, {
		name:  "a type Bedrock does not take",
		rules: claude,
		media: []tools.Media{{Type: "audio/mpeg", Data: []byte("ID3")}, {Type: "", Data: nil}},
		want:  []string{"text:[audio/mpeg, 3 B: left out, not an image or document type Bedrock takes]", "text:[, 0 B: left out, not an image or document type Bedrock takes]"},
	}, {
		name:  "no media",
		rules: claude,
		want:  nil,
		infos: []Info{},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			content, infos := Content(tc.rules, tc.media)
			assert.Equal(t, tc.want, describe(content))
			require.Len(t, infos, len(tc.media))
			if tc.infos != nil {
				assert.Equal(t, tc.infos, infos)
			}
			for i, info := range infos {
				if info.LeftOut != "" {
					assert.Equal(t, "text:"+info.String(), describe(content[i : i+1])[0], "a placeholder says what was left out")
				}
			}
		})
	}
}

func TestLimit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content []types.ContentBlock
		want    [][]string
	}{{
		name:    "within the limits",
		content: []types.ContentBlock{result("t1", img(5), doc("a")), result("t2", repeat(img(5), 19)...)},
		want:    [][]string{{"image:jpeg:5", "document:txt:a:1"}, describe(repeat(img(5), 19))},
	}, {
		name:    "the 21st image over the calls of a message",
		content: []types.ContentBlock{result("t1", repeat(img(5), 15)...), result("t2", append(repeat(img(2048), 6), txt("out"))...)},
		want: [][]string{describe(repeat(img(5), 15)),
			append(describe(repeat(img(2048), 5)), "text:[image/jpeg, 2 KiB: left out, a message holds at most 20 images]", "text:out")},
	}, {
		name:    "the 6th document",
		content: []types.ContentBlock{result("t1", doc("a"), doc("b"), doc("c")), &types.ContentBlockMemberText{Value: "beside"}, result("t2", doc("d"), doc("e"), doc("f"), doc("g"))},
		want: [][]string{{"document:txt:a:1", "document:txt:b:1", "document:txt:c:1"},
			{"document:txt:d:1", "document:txt:e:1", "text:[text/plain, 1 B: left out, a message holds at most 5 documents]", "text:[text/plain, 1 B: left out, a message holds at most 5 documents]"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			before := results(tc.content)
			got := Limit(tc.content)
			assert.Equal(t, tc.want, results(got))
			assert.Equal(t, before, results(tc.content), "no block of content is written")
			assert.Len(t, got, len(tc.content))
			if assert.ObjectsAreEqual(before, tc.want) {
				assert.Same(t, &tc.content[0], &got[0], "content itself when nothing changed")
			}
		})
	}
}

func TestUniqueNames(t *testing.T) {
	historyOf := func(names ...string) []types.Message {
		var blocks []types.ToolResultContentBlock
		for _, n := range names {
			blocks = append(blocks, doc(n))
		}
		return []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{result("h1", blocks...)}}}
	}
	long := strings.Repeat("a", 197) + " bc" // Bedrock's longest, 200 characters
	for _, tc := range []struct {
		name    string
		history []types.Message
		content []types.ContentBlock
		want    [][]string
	}{{
		name:    "distinct names stay",
		history: historyOf("a"),
		content: []types.ContentBlock{result("t1", doc("b"), doc("c"))},
		want:    [][]string{{"document:txt:b:1", "document:txt:c:1"}},
	}, {
		name:    "a name of the history, in another case",
		history: historyOf("Notes"),
		content: []types.ContentBlock{result("t1", doc("notes"))},
		want:    [][]string{{"document:txt:notes 2:1"}},
	}, {
		name:    "a name twice in content, over calls",
		content: []types.ContentBlock{result("t1", doc("notes")), result("t2", doc("notes"), doc("notes"))},
		want:    [][]string{{"document:txt:notes:1"}, {"document:txt:notes 2:1", "document:txt:notes 3:1"}},
	}, {
		name:    "numbers after a number, past those taken",
		history: historyOf("document 1", "document 2"),
		content: []types.ContentBlock{result("t1", doc("document 1"), doc("document 3"))},
		want:    [][]string{{"document:txt:document 4:1", "document:txt:document 3:1"}},
	}, {
		name:    "a long name cut to make room",
		content: []types.ContentBlock{result("t1", doc(long), doc(long))},
		want:    [][]string{{"document:txt:" + long + ":1", "document:txt:" + strings.Repeat("a", 197) + " 2:1"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			before := results(tc.content)
			assert.Equal(t, tc.want, results(UniqueNames(tc.history, tc.content)))
			assert.Equal(t, before, results(tc.content), "no block of content is written")
		})
	}
}

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		history []types.Message
		content []types.ContentBlock
		want    [][]string
	}{{
		name:    "nothing to do",
		content: []types.ContentBlock{result("t1", txt("out"), doc("a"))},
		want:    [][]string{{"text:out", "document:txt:a:1"}},
	}, {
		name:    "a document left out takes no name",
		content: []types.ContentBlock{result("t1", doc("a"), doc("a"), doc("a"), doc("a"), doc("a")), result("t2", doc("a"))},
		want: [][]string{{"document:txt:a:1", "document:txt:a 2:1", "document:txt:a 3:1", "document:txt:a 4:1", "document:txt:a 5:1"},
			{"text:[text/plain, 1 B: left out, a message holds at most 5 documents]"}},
	}, {
		name:    "a name of the history",
		history: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{result("h1", doc("a"))}}},
		content: []types.ContentBlock{result("t1", doc("a"))},
		want:    [][]string{{"document:txt:a 2:1"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, results(Fit(tc.history, tc.content)))
		})
	}
}

func TestFreeName(t *testing.T) {
	long := strings.Repeat("b", models.MaxDocumentName)
	for _, tc := range []struct {
		name  string
		taken []string
		want  string
	}{
		{"notes", nil, "notes 2"},
		{"notes", []string{"notes 2", "notes 3"}, "notes 4"},
		{"document 1", nil, "document 2"},
		{"document 7", []string{"document 8"}, "document 9"},
		{"report 0", nil, "report 0 2"},
		{"v 2a", nil, "v 2a 2"},
		{"42", nil, "42 2"},
		{long, nil, long[:models.MaxDocumentName-2] + " 2"},
		{strings.Repeat("c", 197) + "  x", nil, strings.Repeat("c", 197) + " 2"},
	} {
		t.Run(tc.name[:min(len(tc.name), 20)], func(t *testing.T) {
			got := freeName(tc.name, func(n string) bool { return n == tc.name || slices.Contains(tc.taken, n) })
			assert.Equal(t, tc.want, got)
			assert.LessOrEqual(t, len(got), models.MaxDocumentName)
		})
	}
}
