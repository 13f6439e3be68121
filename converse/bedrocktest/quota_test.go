package bedrocktest

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuotaSettlesAsBedrockCounts: an answered call is charged its input,
// its cache writes and its output at the model's burndown rate. The rate
// is 5 for Claude Sonnet 4, 1 for Claude 3 Haiku. Its cache reads cost
// nothing. The rest of the minute's quota is there for the next call, and
// no more.
func TestQuotaSettlesAsBedrockCounts(t *testing.T) {
	const quota = 1000
	usage := &types.TokenUsage{InputTokens: aws.Int32(100), CacheReadInputTokens: aws.Int32(5000),
		CacheWriteInputTokens: aws.Int32(50), OutputTokens: aws.Int32(100)}
	tests := []struct {
		model   string
		charged int
	}{
		{"us.anthropic.claude-sonnet-4-20250514-v1:0", 100 + 50 + 5*100},
		{"anthropic.claude-3-haiku-20240307-v1:0", 100 + 50 + 100},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			request := func(maxTokens int) *Request {
				return &Request{ConverseInput: bedrockruntime.ConverseInput{ModelId: aws.String(tt.model),
					InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(int32(maxTokens))}}}
			}
			var qs quotas
			now := time.Unix(0, 0)
			c, ok := qs.admit(Quota{TokensPerMinute: quota}, request(quota-EstimateTokens(request(1))), now)
			require.True(t, ok, "the first call fits the quota")
			qs.settle(c, usage)
			assert.Equal(t, tt.charged, c.tokens)

			room := quota - tt.charged - EstimateTokens(request(1))
			_, ok = qs.admit(Quota{TokensPerMinute: quota}, request(room+1), now)
			assert.False(t, ok, "a call of one token more than the rest is throttled")
			_, ok = qs.admit(Quota{TokensPerMinute: quota}, request(room), now)
			assert.True(t, ok, "a call of the rest fits")
		})
	}
}
