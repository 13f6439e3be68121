// Package media keeps the images and documents of tool results within
// Bedrock's rules. The rules say what a model family takes in a tool result,
// and that bytes are a whole medium of the format. They set limits of size
// and count, and keep document names unique in a request. A medium that
// breaks a rule is replaced by a text block saying so, so that a request is
// never rejected for it. The limits, the checks of bytes and the per-family
// table are in internal/models. converse's Executor applies Content to every
// call's result and Fit to every message of results. A Conversation applies
// Request to every request it makes.
package media

import (
	"fmt"
	"mime"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/models"
	"github.com/tooluse/bedrock/converse/internal/wire"
	"github.com/tooluse/bedrock/tools"
)

// Info describes a medium as it was sent: the fields of converse.MediaInfo,
// which converts from it (so the two cannot drift apart). LeftOut, when not
// empty, says why the medium was left out.
type Info struct {
	Type    string
	Name    string
	Size    int
	LeftOut string
}

// String is the medium as a trace or a placeholder shows it:
// "[image/png, 12 KiB]", or with ": left out, why" before the bracket.
func (m Info) String() string {
	s := "[" + m.Type + ", " + sizeText(m.Size)
	if m.LeftOut != "" {
		s += ": left out, " + m.LeftOut
	}
	return s + "]"
}

// sizeText is n bytes in B, KiB or MiB.
func sizeText(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%d KiB", (n+1<<9)>>10)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// imageFormats and documentFormats map the media types a tools.Media may
// have to Bedrock's formats; image/jpg and image/x-png are aliases seen in
// the wild.
var (
	imageFormats = map[string]types.ImageFormat{
		"image/png": types.ImageFormatPng, "image/jpeg": types.ImageFormatJpeg,
		"image/gif": types.ImageFormatGif, "image/webp": types.ImageFormatWebp,
		"image/jpg": types.ImageFormatJpeg, "image/x-png": types.ImageFormatPng,
	}
	documentFormats = map[string]types.DocumentFormat{
		"application/pdf":    types.DocumentFormatPdf,
		"text/csv":           types.DocumentFormatCsv,
		"text/plain":         types.DocumentFormatTxt,
		"text/markdown":      types.DocumentFormatMd,
		"text/html":          types.DocumentFormatHtml,
		"application/msword": types.DocumentFormatDoc,
		"application/vnd.openxmlformats-officedocument.wordprocessingml.document": types.DocumentFormatDocx,
		"application/vnd.ms-excel": types.DocumentFormatXls,
		"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": types.DocumentFormatXlsx,
	}
)

// Rules are what a model takes in a tool result: a Conversation's model's.
// A nil *Rules, an Executor's alone, which knows no model, takes every kind.
type Rules struct {
	ModelID string
	Kinds   models.Media
}

// Content turns a tool's media into toolResult content under r: an image
// or a document block for each, or a placeholder text for one left out. An
// image whose bytes are of another format than its type says (a jpeg
// labelled image/png) is sent in the format of its bytes, and its Info
// has that format's type. A document is named by its Name, cleaned, or
// else "document N", N its place among the documents of media.
func Content(r *Rules, media []tools.Media) ([]types.ToolResultContentBlock, []Info) {
	content := make([]types.ToolResultContentBlock, 0, len(media))
	infos := make([]Info, 0, len(media))
	docs := 0
	for _, m := range media {
		info := Info{Type: m.Type, Size: len(m.Data)}
		typ, _, err := mime.ParseMediaType(m.Type)
		if err != nil {
			typ = strings.ToLower(strings.TrimSpace(m.Type))
		}
		var block types.ToolResultContentBlock
		if f, ok := imageFormats[typ]; ok {
			if sniffed := models.ImageFormat(m.Data); sniffed != "" && sniffed != string(f) {
				f, info.Type = types.ImageFormat(sniffed), imageType(types.ImageFormat(sniffed))
			}
			info.LeftOut = r.imageProblem(f, m.Data)
			block = &types.ToolResultContentBlockMemberImage{Value: types.ImageBlock{
				Format: f, Source: &types.ImageSourceMemberBytes{Value: m.Data}}}
		} else if f, ok := documentFormats[typ]; ok {
			docs++
			info.Name = models.CleanDocumentName(m.Name)
			if info.Name == "" {
				info.Name = fmt.Sprintf("document %d", docs)
			}
			info.LeftOut = r.documentProblem(f, m.Data)
			block = &types.ToolResultContentBlockMemberDocument{Value: types.DocumentBlock{
				Format: f, Name: aws.String(info.Name), Source: &types.DocumentSourceMemberBytes{Value: m.Data}}}
		} else {
			info.LeftOut = "not an image or document type Bedrock takes"
		}
		if info.LeftOut != "" {
			block = &types.ToolResultContentBlockMemberText{Value: info.String()}
		}
		content = append(content, block)
		infos = append(infos, info)
	}
	return content, infos
}

// imageProblem says why an image cannot be sent, or "".
func (r *Rules) imageProblem(f types.ImageFormat, data []byte) string {
	if r != nil && !r.Kinds.Images {
		return "model " + r.ModelID + " takes no images in tool results"
	}
	if len(data) == 0 {
		return "empty"
	}
	if len(data) > models.MaxImageBytes {
		return "larger than Bedrock's limit of 3.75 MB for an image"
	}
	w, h, ok, err := models.ImageSize(string(f), data)
	switch {
	case err != nil:
		return err.Error()
	case ok && (w > models.MaxImagePixels || h > models.MaxImagePixels):
		return fmt.Sprintf("%d×%d px, more than Bedrock's limit of 8000 px a side", w, h)
	}
	return ""
}

// Problem says why Bedrock would reject an image or a document block of a
// user's message, or "". It judges as imageProblem and documentProblem
// judge a tool's. It also reports an image whose bytes are of another
// format than the block says ("a jpeg image labelled png"). Sources that
// are not bytes (S3) are not read.
func Problem(b types.ContentBlock) string {
	switch v := b.(type) {
	case *types.ContentBlockMemberImage:
		src, ok := v.Value.Source.(*types.ImageSourceMemberBytes)
		if !ok {
			return ""
		}
		if f := models.ImageFormat(src.Value); f != "" && f != string(v.Value.Format) {
			return fmt.Sprintf("a %s image labelled %s", f, v.Value.Format)
		}
		return (*Rules)(nil).imageProblem(v.Value.Format, src.Value)
	case *types.ContentBlockMemberDocument:
		src, ok := v.Value.Source.(*types.DocumentSourceMemberBytes)
		if !ok {
			return ""
		}
		return (*Rules)(nil).documentProblem(v.Value.Format, src.Value)
	}
	return ""
}

// documentProblem says why a document of format f cannot be sent, or "".
func (r *Rules) documentProblem(f types.DocumentFormat, data []byte) string {
	if r != nil && !r.Kinds.Documents {
		return "model " + r.ModelID + " takes no documents in tool results"
	}
	if len(data) > models.MaxDocumentBytes {
		return "larger than Bedrock's limit of 4.5 MB for a document"
	}
	return models.DocumentProblem(string(f), data)
}

// Fit keeps the media of content, the toolResult blocks of a user message
// that follows history, within Bedrock's rules for a message. The message
// holds at most 20 images and 5 documents (see Limit). The request holds
// no document name twice (see UniqueNames). The limits of a whole request are
// Request's, applied to each request and not to the history. It changes no
// block of content, which may be shared with the history: it returns
// content, or a copy with new blocks where something changed.
func Fit(history []types.Message, content []types.ContentBlock) []types.ContentBlock {
	return UniqueNames(history, Limit(content))
}

// Limit keeps the toolResult blocks of one user message within Bedrock's
// limits of images and documents per message. No request takes more of
// them. Media past them, in the order of the blocks, are replaced by
// placeholders. It changes no block of content, as Fit.
func Limit(content []types.ContentBlock) []types.ContentBlock {
	images, docs := 0, 0
	return rewriteResults(content, func(c types.ToolResultContentBlock) types.ToolResultContentBlock {
		var info Info
		switch v := c.(type) {
		case *types.ToolResultContentBlockMemberImage:
			if images++; images <= models.MaxImages {
				return nil
			}
			info = imageInfo(v.Value)
			info.LeftOut = "a message holds at most 20 images"
		case *types.ToolResultContentBlockMemberDocument:
			if docs++; docs <= models.MaxDocuments {
				return nil
			}
			info = documentInfo(v.Value)
			info.LeftOut = "a message holds at most 5 documents"
		default:
			return nil
		}
		return &types.ToolResultContentBlockMemberText{Value: info.String()}
	})
}

// UniqueNames renames the documents of content whose names an earlier
// document of the request has, in history or before them in content. It looks
// at content's top level (a user's message) and in its toolResult blocks.
// Bedrock rejects a request whose messages hold a name twice. A repeat is
// numbered ("notes 2", "notes 3"; "document 2" after "document 1") with the
// first number that no document of the request has. Names are compared
// without regard to case, in case Bedrock does. It changes no block of
// content, as Fit.
func UniqueNames(history []types.Message, content []types.ContentBlock) []types.ContentBlock {
	names := wire.DocumentNames(types.Message{Content: content})
	if len(names) == 0 {
		return content // nothing to rename: the history need not be read
	}
	own := map[string]bool{} // the names of content, which a new name must not take either
	for _, name := range names {
		own[strings.ToLower(name)] = true
	}
	taken := map[string]bool{} // the names of history and those kept so far
	for _, name := range wire.DocumentNames(history...) {
		taken[strings.ToLower(name)] = true
	}
	// unique returns doc, or a copy with a name of its own.
	unique := func(doc types.DocumentBlock) (types.DocumentBlock, bool) {
		name := aws.ToString(doc.Name)
		if !taken[strings.ToLower(name)] {
			taken[strings.ToLower(name)] = true
			return doc, false
		}
		name = freeName(name, func(n string) bool { return taken[strings.ToLower(n)] || own[strings.ToLower(n)] })
		taken[strings.ToLower(name)] = true
		doc.Name = aws.String(name)
		return doc, true
	}
	out, copied := content, false
	for i, b := range content {
		nb := b
		switch v := b.(type) {
		case *types.ContentBlockMemberDocument:
			if doc, renamed := unique(v.Value); renamed {
				nb = &types.ContentBlockMemberDocument{Value: doc}
			}
		case *types.ContentBlockMemberToolResult:
			nb = rewriteResults([]types.ContentBlock{b}, func(c types.ToolResultContentBlock) types.ToolResultContentBlock {
				if d, ok := c.(*types.ToolResultContentBlockMemberDocument); ok {
					if doc, renamed := unique(d.Value); renamed {
						return &types.ToolResultContentBlockMemberDocument{Value: doc}
					}
				}
				return nil
			})[0]
		}
		if nb == b {
			continue
		}
		if !copied {
			out, copied = slices.Clone(content), true
		}
		out[i] = nb
	}
	return out
}

// freeName is the first numbered variant of name that taken does not hold.
// That is name with " 2", " 3" and so on. A name that ends in a number
// goes on from it ("document 1" gives "document 2"). The variant is cut to
// keep within Bedrock's length of a name.
func freeName(name string, taken func(string) bool) string {
	base, n := name, 1
	if i := strings.LastIndexByte(name, ' '); i > 0 {
		if k, err := strconv.Atoi(name[i+1:]); err == nil && k > 0 {
			base, n = name[:i], k
		}
	}
	for k := n + 1; ; k++ {
		suffix := " " + strconv.Itoa(k)
		b := base
		if len(b)+len(suffix) > models.MaxDocumentName {
			b = strings.TrimRight(b[:models.MaxDocumentName-len(suffix)], " ")
		}
		if !taken(b + suffix) {
			return b + suffix
		}
	}
}

// rewriteResults replaces the blocks inside the toolResult blocks of
// content, in order, with what replace returns for each: nil keeps a block.
// It changes no block of content, which may be shared with the history: it
// returns content, or a copy with new toolResult blocks where a block was
// replaced.
func rewriteResults(content []types.ContentBlock, replace func(types.ToolResultContentBlock) types.ToolResultContentBlock) []types.ContentBlock {
	out, copied := content, false
	for i, b := range content {
		tr, ok := b.(*types.ContentBlockMemberToolResult)
		if !ok {
			continue
		}
		var inner []types.ToolResultContentBlock // a copy of tr's content, once changed
		for k, c := range tr.Value.Content {
			r := replace(c)
			if r == nil {
				continue
			}
			if inner == nil {
				inner = slices.Clone(tr.Value.Content)
			}
			inner[k] = r
		}
		if inner == nil {
			continue
		}
		if !copied {
			out, copied = slices.Clone(content), true
		}
		block := tr.Value
		block.Content = inner
		out[i] = &types.ContentBlockMemberToolResult{Value: block}
	}
	return out
}

// imageType is the media type of a Bedrock image format: image/png,
// image/jpeg, image/gif, image/webp.
func imageType(f types.ImageFormat) string {
	return "image/" + string(f)
}

// documentType is the media type of a Bedrock document format, from
// documentFormats, which holds one for each.
func documentType(f types.DocumentFormat) string {
	for typ, df := range documentFormats {
		if df == f {
			return typ
		}
	}
	return string(f)
}

// sourceSize is the length of an image's or a document's bytes.
func sourceSize(src any) int {
	switch s := src.(type) {
	case *types.ImageSourceMemberBytes:
		return len(s.Value)
	case *types.DocumentSourceMemberBytes:
		return len(s.Value)
	}
	return 0
}
