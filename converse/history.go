package converse

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/modelinfo"
)

// Usage counts tokens, summed over the turns of a conversation.
type Usage struct {
	InputTokens           int
	OutputTokens          int
	TotalTokens           int
	CacheReadInputTokens  int
	CacheWriteInputTokens int
	// CacheWrite1hInputTokens are those of CacheWriteInputTokens written
	// with the one-hour TTL (Bedrock's cacheDetails), which cost more.
	CacheWrite1hInputTokens int
}

// Cost is u in US dollars at p. The cache writes of the one-hour TTL cost
// p.CacheWrite1h, or p.CacheWrite when that is 0.
func (u Usage) Cost(p modelinfo.Prices) float64 {
	hour := p.CacheWrite1h
	if hour == 0 {
		hour = p.CacheWrite
	}
	fiveMinutes := u.CacheWriteInputTokens - u.CacheWrite1hInputTokens
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output + float64(u.CacheReadInputTokens)*p.CacheRead +
		float64(fiveMinutes)*p.CacheWrite + float64(u.CacheWrite1hInputTokens)*hour) / 1e6
}

// usageOf converts the SDK's usage, whose fields may be absent.
func usageOf(u *types.TokenUsage) Usage {
	if u == nil {
		return Usage{}
	}
	return Usage{
		InputTokens:           int(aws.ToInt32(u.InputTokens)),
		OutputTokens:          int(aws.ToInt32(u.OutputTokens)),
		TotalTokens:           int(aws.ToInt32(u.TotalTokens)),
		CacheReadInputTokens:  int(aws.ToInt32(u.CacheReadInputTokens)),
		CacheWriteInputTokens: int(aws.ToInt32(u.CacheWriteInputTokens)),
		// Bedrock lists the writes by TTL, the hour's first.
		CacheWrite1hInputTokens: cacheWritesOf(u.CacheDetails, types.CacheTTLOneHour),
	}
}

// cacheWritesOf sums the cache writes of details with the TTL ttl.
func cacheWritesOf(details []types.CacheDetail, ttl types.CacheTTL) int {
	n := 0
	for _, d := range details {
		if d.Ttl == ttl {
			n += int(aws.ToInt32(d.InputTokens))
		}
	}
	return n
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:           u.InputTokens + v.InputTokens,
		OutputTokens:          u.OutputTokens + v.OutputTokens,
		TotalTokens:           u.TotalTokens + v.TotalTokens,
		CacheReadInputTokens:  u.CacheReadInputTokens + v.CacheReadInputTokens,
		CacheWriteInputTokens: u.CacheWriteInputTokens + v.CacheWriteInputTokens,

		CacheWrite1hInputTokens: u.CacheWrite1hInputTokens + v.CacheWrite1hInputTokens,
	}
}
