package bedrocktest

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/cachepoint"
	"github.com/tooluse/bedrock/converse/internal/models"
	"github.com/tooluse/bedrock/converse/internal/wire"
)

// EstimateTokens is the server's count of the input tokens of a request.
// It counts a token per four bytes of the canonical JSON of its messages,
// system prompt and tools, cache points left out. That JSON is the SDK's
// encoding of a request body holding only those. Each image counts by its
// size: width × height / 750, as Anthropic's vision guide has it, the
// image scaled to at most 2,576 px a side. Each PDF counts by its pages.
// It stands in for the model's tokenizer in usage (Options.Accounting),
// the context window (Options.MaxInputTokens) and CountTokens.
func EstimateTokens(req *Request) int {
	return wire.EstimateTokens(cachepoint.Prefix(&req.ConverseInput, nil))
}

// validateCache checks a request's cache points against Bedrock's prompt
// caching rules (see models.Cache for the table and its sources). Where
// Bedrock's wording is not documented, the message is the server's own
// and says so by naming the rule.
func validateCache(m models.Model, req *Request) *Error {
	points := cachepoint.List(&req.ConverseInput)
	if len(points) == 0 {
		return nil
	}
	rules, ok := m.Cache()
	if !ok {
		return Validation("You invoked an unsupported model or your request did not allow prompt caching. See the documentation for more information.")
	}
	if len(points) > models.MaxCachePoints {
		return Validation(fmt.Sprintf("A maximum of %d blocks with cache_control may be provided. Found %d.", models.MaxCachePoints, len(points)))
	}
	prev := 1
	for _, p := range points {
		switch {
		case p.Field == cachepoint.Tools && !rules.Tools:
			return Validation(fmt.Sprintf("Malformed input request: #/toolConfig/tools/%d: extraneous key [cachePoint] is not permitted, please reformat your input and try again.", p.Index))
		case p.Field == cachepoint.System && !rules.System, p.Field == cachepoint.Messages && !rules.Messages:
			return Validation("You invoked an unsupported model or your request did not allow prompt caching. See the documentation for more information.")
		case p.TTL != "" && p.TTL != types.CacheTTLFiveMinutes && p.TTL != types.CacheTTLOneHour:
			return Validation(fmt.Sprintf("1 validation error detected: Value '%s' at 'cachePoint.ttl' failed to satisfy constraint: Member must satisfy enum value set: [5m, 1h]", p.TTL))
		case p.TTL == types.CacheTTLOneHour && !rules.LongTTL:
			return Validation(fmt.Sprintf("The model %s does not support the cache point TTL 1h. Use 5m and try again.", aws.ToString(req.ModelId)))
		case cachepoint.Rank(p.TTL) > prev:
			return Validation("A cachePoint with ttl '1h' must not come after a cachePoint with ttl '5m': TTLs must not increase from tools to system to messages.")
		}
		prev = cachepoint.Rank(p.TTL)
		if p.Field == cachepoint.Messages && p.Index > 0 {
			switch cachepoint.Follows(rules, req.Messages[p.Msg].Content[p.Index-1]) {
			case cachepoint.AfterMedia:
				return Validation(fmt.Sprintf("The cachePoint at messages.%d.content.%d directly follows a document or video block, which is not supported. Move the cachePoint and try again.", p.Msg, p.Index))
			case cachepoint.AfterToolResult:
				return Validation(fmt.Sprintf("Malformed input request: #/messages/%d/content/%d: extraneous key [cachePoint] is not permitted, please reformat your input and try again.", p.Msg, p.Index))
			case cachepoint.AfterReasoning:
				return Validation("Cache point cannot be inserted after reasoning block")
			}
		}
	}
	return nil
}

// promptCache simulates Bedrock's prompt cache as the user guide describes
// it. A request writes the prefix up to each of its cache points for the
// point's TTL, if the prefix has the model's minimum tokens or more. A
// later request with the same prefix up to one of its points, within that
// TTL, reads it from the cache. A read starts the TTL again.
type promptCache struct {
	now func() time.Time

	mu      sync.Mutex
	entries map[[sha256.Size]byte]time.Time // prefix digest → expiry
}

// usage counts the input tokens of req as Bedrock bills them. read is the
// longest cached prefix. write runs from there to the last cache point;
// hour is the part of it up to the last point with the one-hour TTL. input
// is the rest.
func (c *promptCache) usage(req *Request) (input, read, write, hour int) {
	total := EstimateTokens(req)
	rules, ok := models.Parse(aws.ToString(req.ModelId)).Cache()
	if !ok {
		return total, 0, 0, 0
	}
	type prefix struct {
		key    [sha256.Size]byte
		tokens int
		ttl    time.Duration
	}
	var prefixes []prefix
	for _, p := range cachepoint.List(&req.ConverseInput) {
		in := cachepoint.Prefix(&req.ConverseInput, &p)
		b, err := wire.CanonicalJSON(in)
		tokens := wire.EstimateTokens(in) // as total counts them, media included
		if err != nil || tokens < rules.MinTokens {
			continue
		}
		ttl := 5 * time.Minute
		if p.TTL == types.CacheTTLOneHour {
			ttl = time.Hour
		}
		prefixes = append(prefixes, prefix{sha256.Sum256(append([]byte(aws.ToString(req.ModelId)+"\x00"), b...)), tokens, ttl})
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[[sha256.Size]byte]time.Time{}
	}
	for _, p := range prefixes {
		if exp, hit := c.entries[p.key]; hit && now.Before(exp) {
			read = max(read, p.tokens)
		}
		c.entries[p.key] = now.Add(p.ttl)
	}
	for _, p := range prefixes {
		write = max(write, p.tokens-read)
		if p.ttl == time.Hour {
			hour = max(hour, p.tokens-read)
		}
	}
	return max(total-read-write, 0), read, write, hour
}

// withUsage returns reply with the server's accounting of req in its usage,
// the output tokens as the reply had them. Replies served byte for byte
// (Raw, Events) are left as they are.
func (s *Server) withUsage(req *Request, reply *Reply) *Reply {
	if !s.opts.Accounting || reply.Output == nil {
		return reply
	}
	input, read, write, hour := s.cache.usage(req)
	out := *reply.Output
	var output int32
	if out.Usage != nil {
		output = aws.ToInt32(out.Usage.OutputTokens)
	}
	out.Usage = &types.TokenUsage{
		InputTokens:           aws.Int32(int32(input)),
		OutputTokens:          aws.Int32(output),
		TotalTokens:           aws.Int32(int32(input+read+write) + output),
		CacheReadInputTokens:  aws.Int32(int32(read)),
		CacheWriteInputTokens: aws.Int32(int32(write)),
		CacheDetails:          cacheDetails(write, hour),
	}
	r := *reply
	r.Output = &out
	return &r
}

// cacheDetails are the cache writes of a reply by TTL, as Bedrock lists
// them: the hour's before the five minutes', none without a write.
func cacheDetails(write, hour int) []types.CacheDetail {
	var d []types.CacheDetail
	if hour > 0 {
		d = append(d, types.CacheDetail{Ttl: types.CacheTTLOneHour, InputTokens: aws.Int32(int32(hour))})
	}
	if write > hour {
		d = append(d, types.CacheDetail{Ttl: types.CacheTTLFiveMinutes, InputTokens: aws.Int32(int32(write - hour))})
	}
	return d
}
