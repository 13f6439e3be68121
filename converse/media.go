package converse

import (
	"github.com/tooluse/bedrock/converse/internal/media"
	"github.com/tooluse/bedrock/tools"
)

// MediaInfo describes an image or a document a tool returned in a
// tools.Result, as a ToolEnd event reports it: never its bytes.
//
// Media go to the model as image and document blocks inside the call's
// toolResult, beside its output. Bedrock's limits are kept before the call:
// at most 3.75 MB and 8,000 px a side for an image (the size of a webp image
// is not read, only its bytes counted), 4.5 MB for a document, and at most
// 20 images and 5 documents in the message that answers a turn's calls. A
// Conversation also keeps to what the model family takes in a tool result
// (Claude 3 and later: images and documents; Amazon Nova: images; others:
// none); an Executor alone knows no model and sends both. Media that break
// a rule are left out and replaced by a text block saying so, such as
// "[image/png, 12 KiB: left out, model X takes no images in tool results]",
// so a request is never rejected for them. The output limit (MaxOutput)
// bounds the output only, not the media, which Bedrock's limits bound.
//
// A document is sent with its tools.Media Name, cleaned, or else as
// "document N", N its place among its call's documents. Bedrock rejects a
// request that holds a document name twice, so a name that an earlier
// document of the request has (one of the history a Conversation sends, or
// of an earlier call of the turn) is numbered: "notes 2", "document 2".
type MediaInfo struct {
	Type string // the media type, such as image/png
	Name string // the document's name, cleaned to the characters Bedrock allows, before a repeat is numbered; "" for an image
	Size int    // bytes
	// LeftOut, when not empty, says why the medium was left out and a
	// placeholder sent instead. The message's limits of 20 images and 5
	// documents are applied once every call of the turn is answered, after
	// the ToolEnd events, and are not reported here; nor is the number a
	// repeated name gets then.
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
