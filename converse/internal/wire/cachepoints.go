package wire

import (
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// The fields of a request that hold cache points, in the order Bedrock
// reads them.
const (
	FieldTools = iota
	FieldSystem
	FieldMessages
)

// CachePoint is where a request holds a cachePoint block: in toolConfig's
// tools, in system, or in the content of message Msg; Index is its place in
// its list.
type CachePoint struct {
	Field int
	Msg   int
	Index int
	TTL   types.CacheTTL
}

// CachePoints lists the cache points of in, in Bedrock's order: tools,
// system, messages.
func CachePoints(in *bedrockruntime.ConverseInput) []CachePoint {
	var points []CachePoint
	if in.ToolConfig != nil {
		for i, t := range in.ToolConfig.Tools {
			if cp, ok := t.(*types.ToolMemberCachePoint); ok {
				points = append(points, CachePoint{Field: FieldTools, Index: i, TTL: cp.Value.Ttl})
			}
		}
	}
	for i, b := range in.System {
		if cp, ok := b.(*types.SystemContentBlockMemberCachePoint); ok {
			points = append(points, CachePoint{Field: FieldSystem, Index: i, TTL: cp.Value.Ttl})
		}
	}
	for n, msg := range in.Messages {
		for i, b := range msg.Content {
			if cp, ok := b.(*types.ContentBlockMemberCachePoint); ok {
				points = append(points, CachePoint{Field: FieldMessages, Msg: n, Index: i, TTL: cp.Value.Ttl})
			}
		}
	}
	return points
}

// TTLRank orders cache TTLs: the default (none, or 5m) 0, 1h 1.
func TTLRank(ttl types.CacheTTL) int {
	if ttl == types.CacheTTLOneHour {
		return 1
	}
	return 0
}
