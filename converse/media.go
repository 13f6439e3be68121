package converse

import (
	"github.com/tooluse/bedrock/converse/internal/media"
	"github.com/tooluse/bedrock/tools"
)

// MediaInfo describes an image or a document a tool returned in a
// tools.Result, as a ToolEnd event reports it: never its bytes.
//
// Media go to the model as image and document blocks inside the call's
// toolResult, beside its output. What Bedrock would reject is replaced by a
// text block saying so, such as "[image/png, 12 KiB: left out, model X
// takes no images in tool results]", so a request is never rejected for
// it:
//
//   - before the call's result enters the history: a medium of no bytes;
//     an image of more than 3.75 MB or 8,000 px a side, or whose bytes are
//     not a whole png, jpeg, gif or webp image (the size read from the
//     header, webp's too, the end checked, nothing decoded); a document of
//     more than 4.5 MB, or whose bytes do not start as its format's do
//     (%PDF- for pdf, a zip archive for docx and xlsx, an OLE file for doc
//     and xls) or, for txt, csv, md and html, are not UTF-8; and a kind
//     the model family does not take in a tool result (Claude 3 and
//     later: images and documents; Amazon Nova: images; others: none; an
//     Executor alone knows no model and sends both). An image whose bytes
//     are of another format than its type says (a jpeg labelled
//     image/png) is sent in the format of its bytes; image/jpg and
//     image/x-png are taken for image/jpeg and image/png.
//   - once every call of a turn is answered, in the message that answers
//     them, which enters the history: the images past 20 and the
//     documents past 5 in the message, in the order of the calls.
//   - in each request a Conversation makes, not in its history, which
//     keeps every medium: over all the request's messages (documents of
//     the user's own messages too), the documents past the newest 5 and,
//     for Claude, the images and documents past the newest 100 together,
//     the oldest first, and in a request of more than 20 images those
//     larger than 2,000 px a side. Past Claude's 100 they are left out 5 at a time, so
//     that the requests in between send the same messages and the prompt
//     cache holds; a medium left out stays left out in later requests.
//
// The output limit (MaxOutput) bounds the output only, not the media,
// which Bedrock's limits bound.
//
// A document is sent with its tools.Media Name, cleaned, or else as "document
// N", N its place among its call's documents. Cleaning drops a document
// format's extension, such as .pdf. It makes a space of any other character
// Bedrock does not allow, a dot among them. Bedrock rejects a request that
// holds a document name twice. So a name that an earlier document of the
// request has is numbered: "notes 2", "document 2". That earlier document may
// be one of the history a Conversation sends, or of an earlier call of the
// turn.
type MediaInfo struct {
	Type string // the media type, such as image/png: for an image, that of the format of its bytes when they disagree
	Name string // the document's name, cleaned to the characters Bedrock allows, before a repeat is numbered; "" for an image
	Size int    // bytes
	// LeftOut, when not empty, says why the medium was left out and a
	// placeholder sent instead. The limits of a message (20 images and 5
	// documents) are applied once every call of the turn is answered. Those of
	// a request are applied in each request, after the ToolEnd events. They
	// are not reported here, nor is the number a repeated name gets.
	LeftOut string
}

// String is the medium as a trace or a placeholder shows it:
// "[image/png, 12 KiB]", or with ": left out, why" before the bracket.
func (m MediaInfo) String() string {
	return media.Info(m).String()
}

// mediaInfos are the infos of media.Content, for a ToolEnd event.
func mediaInfos(infos []media.Info) []MediaInfo {
	out := make([]MediaInfo, len(infos))
	for i, info := range infos {
		out[i] = MediaInfo(info)
	}
	return out
}

// resultParts splits what a tool returned into the output to encode and the
// media of a tools.Result; encode is false for media without output.
func resultParts(v any) (output any, media []tools.Media, encode bool) {
	switch r := v.(type) {
	case tools.Result:
		return r.Output, r.Media, r.Output != nil || len(r.Media) == 0
	case *tools.Result:
		if r != nil {
			return r.Output, r.Media, r.Output != nil || len(r.Media) == 0
		}
	}
	return v, nil, true
}
