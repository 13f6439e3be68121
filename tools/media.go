package tools

// Media is an image or a document a tool returns to the model, inside a
// [Result].
type Media struct {
	// Type is the media type: image/png, image/jpeg, image/gif or
	// image/webp for an image; application/pdf, text/csv, text/plain,
	// text/markdown, text/html, application/msword,
	// application/vnd.openxmlformats-officedocument.wordprocessingml.document,
	// application/vnd.ms-excel or
	// application/vnd.openxmlformats-officedocument.spreadsheetml.sheet for
	// a document.
	Type string
	// Name is a document's name as the model sees it; optional for images.
	Name string
	// Data is the image's or the document's bytes.
	Data []byte
}

// Result is a tool's output with media. A function returns it (as the Out of
// a [New] tool, or from a [NewRaw] tool's function) to send Media beside or
// instead of Output. Output is encoded as JSON as any other output is. A nil
// Output means media only.
type Result struct {
	// Output is the tool's output, encoded as JSON; nil for none.
	Output any
	// Media are the images and documents sent with Output, in order.
	Media []Media
}
