package bedrocktest

import (
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// Quota is a per-minute quota of model calls, as Bedrock's account quotas
// are: RequestsPerMinute calls and TokensPerMinute tokens in any minute;
// 0 leaves one unlimited. As Bedrock does (the user guide's "How tokens
// are counted in Amazon Bedrock"), a call is charged its input tokens
// (EstimateTokens) plus its maxTokens when it arrives, and the charge is
// settled to the input and output tokens of its reply's usage once it is
// answered. A call past the quota gets a ThrottlingException and is not
// charged.
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

// charge is what one call was charged, and when.
type charge struct {
	at     time.Time
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
	c := &charge{at: now, tokens: tokens}
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
	c.tokens = int(aws.ToInt32(u.InputTokens) + aws.ToInt32(u.CacheReadInputTokens) +
		aws.ToInt32(u.CacheWriteInputTokens) + aws.ToInt32(u.OutputTokens))
}

// Throttles counts the calls answered with a ThrottlingException for
// being past Options.Quota.
func (s *Server) Throttles() int {
	s.quotas.mu.Lock()
	defer s.quotas.mu.Unlock()
	return s.quotas.throttled
}
