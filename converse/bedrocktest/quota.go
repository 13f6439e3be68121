package bedrocktest

import (
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/models"
)

// Quota is a per-minute quota of model calls, as Bedrock's account quotas
// are: RequestsPerMinute calls and TokensPerMinute tokens in any minute.
// 0 leaves one unlimited.
//
// Calls are charged as Bedrock charges them (the user guide's "How tokens are
// counted in Amazon Bedrock",
// https://docs.aws.amazon.com/bedrock/latest/userguide/quotas-token-burndown.html).
// When a call arrives, it is charged its input tokens (EstimateTokens) plus
// its maxTokens. Once it is answered, the charge is settled to its reply's
// usage as the quotas count it, as quota.Limiter counts them too. That is the
// input tokens, the cache writes and the output tokens at the model's
// burndown rate; cache reads count not at all. The rate is 5 tokens an output
// token for Claude 3.7 Sonnet and Claude 4 to 4.6, 1 for the others. A call
// past the quota gets a ThrottlingException and is not charged.
type Quota struct {
	RequestsPerMinute int
	TokensPerMinute   int
}

// quotas keeps the charges of the last minute, by model ID.
type quotas struct {
	mu        sync.Mutex
	byModel   map[string][]*charge
	throttled int
}

// charge is what one call of model was charged, and when.
type charge struct {
	at     time.Time
	model  models.Model
	tokens int
}

// admit charges a call of req at now, or reports false when it is past q.
func (qs *quotas) admit(q Quota, req *Request, now time.Time) (*charge, bool) {
	if q.RequestsPerMinute <= 0 && q.TokensPerMinute <= 0 {
		return nil, true
	}
	tokens := EstimateTokens(req)
	if req.InferenceConfig != nil {
		tokens += int(aws.ToInt32(req.InferenceConfig.MaxTokens))
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if qs.byModel == nil {
		qs.byModel = map[string][]*charge{}
	}
	live := qs.byModel[aws.ToString(req.ModelId)]
	for len(live) > 0 && now.Sub(live[0].at) >= time.Minute {
		live = live[1:]
	}
	used := 0
	for _, c := range live {
		used += c.tokens
	}
	if (q.RequestsPerMinute > 0 && len(live)+1 > q.RequestsPerMinute) ||
		(q.TokensPerMinute > 0 && used+tokens > q.TokensPerMinute) {
		qs.byModel[aws.ToString(req.ModelId)] = live
		qs.throttled++
		return nil, false
	}
	c := &charge{at: now, model: models.Parse(aws.ToString(req.ModelId)), tokens: tokens}
	qs.byModel[aws.ToString(req.ModelId)] = append(live, c)
	return c, true
}

// settle charges c the tokens of usage u, when the reply has one.
func (qs *quotas) settle(c *charge, u *types.TokenUsage) {
	if c == nil || u == nil {
		return
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	c.tokens = c.model.QuotaTokens(int(aws.ToInt32(u.InputTokens)), int(aws.ToInt32(u.CacheWriteInputTokens)),
		int(aws.ToInt32(u.OutputTokens)))
}

// Throttles counts the calls answered with a ThrottlingException for
// being past Options.Quota.
func (s *Server) Throttles() int {
	s.quotas.mu.Lock()
	defer s.quotas.mu.Unlock()
	return s.quotas.throttled
}
