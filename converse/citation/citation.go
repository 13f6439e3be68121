// Package citation describes the sources an answer cites. Citations come
// with documents with citations enabled, search results, or a system tool
// such as nova_grounding. The model then answers in citationsContent
// blocks, each a span of generated text with the sources it rests on.
// converse.Result.Citations holds them as Citation values.
package citation

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/message"
)

// Citation is one source an answer cites, for one span of its text.
type Citation struct {
	// Text is the span of generated text the citation supports; it is part
	// of the answer's text (converse.Result.Text).
	Text string
	// Title and Source name the cited document or search result, as
	// Bedrock gave them; either may be empty.
	Title  string
	Source string
	// Kind says what Location holds; it is empty for a location this
	// package does not know, or none.
	Kind     Kind
	Location Location
	// Quotes are the cited passages of the source (sourceContent), if
	// Bedrock sent them.
	Quotes []string
}

// Kind is the kind of a citation's location.
type Kind string

// The kinds of location Bedrock gives (the members of CitationLocation in
// the API).
const (
	Page         Kind = "page"         // documentPage
	Char         Kind = "char"         // documentChar
	Chunk        Kind = "chunk"        // documentChunk
	SearchResult Kind = "searchResult" // searchResultLocation
	Web          Kind = "web"          // web
)

// Location is where in its source a citation points. For pages,
// characters and chunks, Index is the document's index in the request.
// Start and End are then the range as Bedrock gives it, End exclusive: a
// citation of page 1 alone is Start 1, End 2, as Claude gives it. For a
// search result, Index is the search result's index and Start and End its
// content blocks. For the web, URL and Domain are set. Fields Bedrock left
// out are zero.
type Location struct {
	Index       int
	Start, End  int
	URL, Domain string
}

// String describes the citation in a few words for a reader, such as
// "Annual report, page 3" or "https://example.com/a (example.com)".
func (c Citation) String() string {
	name := c.Title
	if name == "" {
		name = c.Source
	}
	var where string
	l := c.Location
	switch c.Kind {
	case Page:
		where = span("page", "pages", l.Start, l.End)
	case Char:
		where = span("character", "characters", l.Start, l.End)
	case Chunk:
		where = span("chunk", "chunks", l.Start, l.End)
	case SearchResult:
		where = fmt.Sprintf("search result %d", l.Index)
	case Web:
		where = l.URL
		if where == "" {
			where = l.Domain
		}
	}
	switch {
	case name == "":
		return where
	case where == "" || where == name:
		return name
	}
	return name + ", " + where
}

// span words the range from start to end, exclusive, as a reader counts
// (pages 3-4 for start 3, end 5); an end that is missing or at most one past
// start names start alone.
func span(one, many string, start, end int) string {
	if end-1 <= start {
		return fmt.Sprintf("%s %d", one, start)
	}
	return fmt.Sprintf("%s %d-%d", many, start, end-1)
}

// FromMessage returns the citations of msg, an assistant message, in the
// order of its citationsContent blocks; nil when it cites nothing.
func FromMessage(msg types.Message) []Citation {
	var out []Citation
	for _, b := range msg.Content {
		cc, ok := b.(*types.ContentBlockMemberCitationsContent)
		if !ok {
			continue
		}
		text := message.CitedText(cc.Value)
		for _, c := range cc.Value.Citations {
			out = append(out, citationOf(text, c))
		}
	}
	return out
}

func citationOf(text string, c types.Citation) Citation {
	out := Citation{Text: text, Title: aws.ToString(c.Title), Source: aws.ToString(c.Source)}
	for _, sc := range c.SourceContent {
		if t, ok := sc.(*types.CitationSourceContentMemberText); ok {
			out.Quotes = append(out.Quotes, t.Value)
		}
	}
	i := func(p *int32) int { return int(aws.ToInt32(p)) }
	switch l := c.Location.(type) {
	case *types.CitationLocationMemberDocumentPage:
		out.Kind, out.Location = Page, Location{Index: i(l.Value.DocumentIndex), Start: i(l.Value.Start), End: i(l.Value.End)}
	case *types.CitationLocationMemberDocumentChar:
		out.Kind, out.Location = Char, Location{Index: i(l.Value.DocumentIndex), Start: i(l.Value.Start), End: i(l.Value.End)}
	case *types.CitationLocationMemberDocumentChunk:
		out.Kind, out.Location = Chunk, Location{Index: i(l.Value.DocumentIndex), Start: i(l.Value.Start), End: i(l.Value.End)}
	case *types.CitationLocationMemberSearchResultLocation:
		out.Kind, out.Location = SearchResult, Location{Index: i(l.Value.SearchResultIndex), Start: i(l.Value.Start), End: i(l.Value.End)}
	case *types.CitationLocationMemberWeb:
		out.Kind, out.Location = Web, Location{URL: aws.ToString(l.Value.Url), Domain: aws.ToString(l.Value.Domain)}
	}
	return out
}
