// Package cachepoint holds the prompt-caching rules that the loop and
// bedrocktest share. The loop places cache points (Place); bedrocktest
// checks and simulates them. List says where a request holds its points,
// Rank orders their TTLs, Follows says which block a point may follow, and
// Prefix gives the prefix a point closes. The per-model table is
// models.Cache.
package cachepoint

import (
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/models"
)

// The fields of a request that hold cache points, in the order Bedrock
// reads them.
const (
	Tools = iota
	System
	Messages
)

// Point is where a request holds a cachePoint block: in toolConfig's tools,
// in system, or in the content of message Msg (Field is Tools, System or
// Messages); Index is its place in its list.
type Point struct {
	Field int
	Msg   int
	Index int
	TTL   types.CacheTTL
}

// List lists the cache points of in, in Bedrock's order: tools, system,
// messages.
func List(in *bedrockruntime.ConverseInput) []Point {
	var points []Point
	if in.ToolConfig != nil {
		for i, t := range in.ToolConfig.Tools {
			if cp, ok := t.(*types.ToolMemberCachePoint); ok {
				points = append(points, Point{Field: Tools, Index: i, TTL: cp.Value.Ttl})
			}
		}
	}
	for i, b := range in.System {
		if cp, ok := b.(*types.SystemContentBlockMemberCachePoint); ok {
			points = append(points, Point{Field: System, Index: i, TTL: cp.Value.Ttl})
		}
	}
	for n, msg := range in.Messages {
		for i, b := range msg.Content {
			if cp, ok := b.(*types.ContentBlockMemberCachePoint); ok {
				points = append(points, Point{Field: Messages, Msg: n, Index: i, TTL: cp.Value.Ttl})
			}
		}
	}
	return points
}

// Rank orders cache TTLs: the default (none, or 5m) 0, 1h 1. Bedrock takes
// no point whose rank is above that of a point before it.
func Rank(ttl types.CacheTTL) int {
	if ttl == types.CacheTTLOneHour {
		return 1
	}
	return 0
}

// Refusal says why a cache point may not follow a block of a message.
type Refusal int

const (
	// Allowed: the point may follow the block.
	Allowed Refusal = iota
	// AfterMedia: Bedrock takes no point right after a document or video.
	AfterMedia
	// AfterToolResult: the model takes no point right after a tool result
	// (models.Cache.AfterToolResult).
	AfterToolResult
	// AfterPoint: the block is a cache point already.
	AfterPoint
	// AfterReasoning: Bedrock takes no point right after a reasoning block
	// ("Cache point cannot be inserted after reasoning block", as reported
	// in github.com/anomalyco/opencode issue 36517).
	AfterReasoning
)

// Follows reports whether a cache point may follow block b of a message,
// for a model with the caching rules rules.
func Follows(rules models.Cache, b types.ContentBlock) Refusal {
	switch b.(type) {
	case *types.ContentBlockMemberCachePoint:
		return AfterPoint
	case *types.ContentBlockMemberDocument, *types.ContentBlockMemberVideo:
		return AfterMedia
	case *types.ContentBlockMemberReasoningContent:
		return AfterReasoning
	case *types.ContentBlockMemberToolResult:
		if !rules.AfterToolResult {
			return AfterToolResult
		}
	}
	return Allowed
}

// Prefix returns the content of in (its messages, system prompt and tools)
// without its cache points: all of it, or with upTo, the prefix that point
// closes, the blocks before it.
func Prefix(in *bedrockruntime.ConverseInput, upTo *Point) *bedrockruntime.ConverseInput {
	out := &bedrockruntime.ConverseInput{}
	if in.ToolConfig != nil {
		out.ToolConfig = &types.ToolConfiguration{}
		for i, t := range in.ToolConfig.Tools {
			if upTo != nil && upTo.Field == Tools && i >= upTo.Index {
				return out
			}
			if _, ok := t.(*types.ToolMemberCachePoint); !ok {
				out.ToolConfig.Tools = append(out.ToolConfig.Tools, t)
			}
		}
	}
	for i, b := range in.System {
		if upTo != nil && upTo.Field == System && i >= upTo.Index {
			return out
		}
		if _, ok := b.(*types.SystemContentBlockMemberCachePoint); !ok {
			out.System = append(out.System, b)
		}
	}
	for n, msg := range in.Messages {
		kept := types.Message{Role: msg.Role}
		for i, b := range msg.Content {
			if upTo != nil && upTo.Field == Messages && n == upTo.Msg && i >= upTo.Index {
				out.Messages = append(out.Messages, kept)
				return out
			}
			if _, ok := b.(*types.ContentBlockMemberCachePoint); !ok {
				kept.Content = append(kept.Content, b)
			}
		}
		out.Messages = append(out.Messages, kept)
	}
	return out
}
