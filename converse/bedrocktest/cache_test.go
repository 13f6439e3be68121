package bedrocktest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/internal/testimage"
	"github.com/tooluse/bedrock/converse/recording"
)

const (
	cacheClaude = "us.anthropic.claude-3-7-sonnet-20250219-v1:0"
	cacheLong   = "us.anthropic.claude-sonnet-4-5-20250929-v1:0" // takes ttl 1h
	cacheNova   = "us.amazon.nova-pro-v1:0"
)

func cachePointBlock(ttl types.CacheTTL) types.ContentBlock {
	return &types.ContentBlockMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointTypeDefault, Ttl: ttl}}
}

func systemPoint(ttl types.CacheTTL) types.SystemContentBlock {
	return &types.SystemContentBlockMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointTypeDefault, Ttl: ttl}}
}

func toolsWithPoint(ttl types.CacheTTL) *types.ToolConfiguration {
	cfg := weatherTools()
	cfg.Tools = append(cfg.Tools, &types.ToolMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointTypeDefault, Ttl: ttl}})
	return cfg
}

func documentBlock() types.ContentBlock {
	return &types.ContentBlockMemberDocument{Value: types.DocumentBlock{
		Name: aws.String("report"), Format: types.DocumentFormatTxt,
		Source: &types.DocumentSourceMemberBytes{Value: []byte("the report")},
	}}
}

func TestValidateCacheRules(t *testing.T) {
	sys := []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "be brief"}, systemPoint("")}
	tests := []struct {
		name   string
		model  string
		system []types.SystemContentBlock
		tools  *types.ToolConfiguration
		msgs   []types.Message
		want   string // "" for valid
	}{
		{name: "claude: tools, system and messages", model: cacheClaude, system: sys, tools: toolsWithPoint(""),
			msgs: []types.Message{user(text("hi"), cachePointBlock(""))}},
		{name: "nova: system and messages", model: cacheNova, system: sys, msgs: []types.Message{user(text("hi"), cachePointBlock(""))}},
		{name: "ttl 1h then 5m", model: cacheLong, system: []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "x"}, systemPoint(types.CacheTTLOneHour)},
			msgs: []types.Message{user(text("hi"), cachePointBlock(types.CacheTTLFiveMinutes))}},
		{name: "model without caching", model: "meta.llama3-1-70b-instruct-v1:0", msgs: []types.Message{user(text("hi"), cachePointBlock(""))},
			want: "You invoked an unsupported model or your request did not allow prompt caching. See the documentation for more information."},
		{name: "claude 3.5 sonnet v2 (preview only)", model: "anthropic.claude-3-5-sonnet-20241022-v2:0", system: sys, msgs: []types.Message{user(text("hi"))},
			want: "You invoked an unsupported model or your request did not allow prompt caching."},
		{name: "nova: no point in tools", model: cacheNova, tools: toolsWithPoint(""), msgs: []types.Message{user(text("hi"))},
			want: "Malformed input request: #/toolConfig/tools/1: extraneous key [cachePoint] is not permitted"},
		{name: "five points", model: cacheClaude, system: sys, tools: toolsWithPoint(""), msgs: []types.Message{
			user(text("a"), cachePointBlock("")), assistant(text("b")), user(text("c"), cachePointBlock("")), assistant(text("d")), user(text("e"), cachePointBlock("")),
		}, want: "A maximum of 4 blocks with cache_control may be provided. Found 5."},
		{name: "ttl 1h on a model without it", model: cacheClaude, msgs: []types.Message{user(text("hi"), cachePointBlock(types.CacheTTLOneHour))},
			want: "does not support the cache point TTL 1h"},
		{name: "ttl increases from system to messages", model: cacheLong, system: sys, msgs: []types.Message{user(text("hi"), cachePointBlock(types.CacheTTLOneHour))},
			want: "TTLs must not increase from tools to system to messages"},
		{name: "ttl increases from tools to system", model: cacheLong, tools: toolsWithPoint(types.CacheTTLFiveMinutes),
			system: []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "x"}, systemPoint(types.CacheTTLOneHour)}, msgs: []types.Message{user(text("hi"))},
			want: "TTLs must not increase"},
		{name: "unknown ttl", model: cacheLong, msgs: []types.Message{user(text("hi"), cachePointBlock("2h"))},
			want: "Member must satisfy enum value set: [5m, 1h]"},
		{name: "point right after a document", model: cacheClaude, msgs: []types.Message{user(text("read this"), documentBlock(), cachePointBlock(""))},
			want: "The cachePoint at messages.0.content.2 directly follows a document or video block"},
		{name: "point right after reasoning", model: cacheClaude, msgs: []types.Message{user(text("think")),
			assistant(&types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{Value: []byte("x")}}, cachePointBlock(""), text("done")), user(text("and?"))},
			want: "Cache point cannot be inserted after reasoning block"},
		{name: "point after text after a document", model: cacheClaude, msgs: []types.Message{user(documentBlock(), text("read this"), cachePointBlock(""))}},
		{name: "claude: point right after a tool result", model: cacheClaude, tools: weatherTools(),
			msgs: []types.Message{user(text("weather?")), assistant(use("t1")), user(result("t1", ""), cachePointBlock(""))}},
		{name: "nova: no point right after a tool result", model: cacheNova, tools: weatherTools(),
			msgs: []types.Message{user(text("weather?")), assistant(use("t1"), cachePointBlock("")), user(result("t1", ""), cachePointBlock(""))},
			want: "Malformed input request: #/messages/2/content/1: extraneous key [cachePoint] is not permitted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Validate(&Request{Operation: recording.OpConverse, ConverseInput: bedrockruntime.ConverseInput{ModelId: aws.String(tt.model), System: tt.system, ToolConfig: tt.tools, Messages: tt.msgs}})
			if tt.want == "" {
				assert.Nil(t, e)
				return
			}
			require.NotNil(t, e)
			assert.Equal(t, "ValidationException", e.Type)
			assert.Contains(t, e.Message, tt.want)
		})
	}
}

// cachedRequest is a Converse request with a system prompt of about
// tokens tokens and a cache point after it.
func cachedRequest(tokens int, msgs ...types.Message) *bedrockruntime.ConverseInput {
	return &bedrockruntime.ConverseInput{
		ModelId: aws.String(cacheClaude),
		System: []types.SystemContentBlock{
			&types.SystemContentBlockMemberText{Value: strings.Repeat("abcd", tokens)},
			systemPoint(""),
		},
		Messages: msgs,
	}
}

// fakeClock is a clock that moves only when told to.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestPromptCacheSimulation(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	srv := NewServer(HandlerFunc(func(ctx context.Context, req *Request) (*Reply, error) { return Text("ok"), nil }),
		func(o *Options) { o.Accounting = true; o.Now = clock.Now })
	defer srv.Close()
	client := srv.Client()
	usage := func(in *bedrockruntime.ConverseInput) types.TokenUsage {
		t.Helper()
		out, err := client.Converse(context.Background(), in)
		require.NoError(t, err)
		return *out.Usage
	}
	in := cachedRequest(2000, user(text("first question")))
	prefix := EstimateTokens(&Request{ConverseInput: bedrockruntime.ConverseInput{System: in.System[:1]}})
	total := EstimateTokens(&Request{ConverseInput: bedrockruntime.ConverseInput{System: in.System, Messages: in.Messages}})

	first := usage(in)
	assert.Equal(t, 0, int(aws.ToInt32(first.CacheReadInputTokens)))
	assert.Equal(t, prefix, int(aws.ToInt32(first.CacheWriteInputTokens)), "the first request writes the prefix")
	assert.Equal(t, total-prefix, int(aws.ToInt32(first.InputTokens)))
	assert.Equal(t, int32(total+5), aws.ToInt32(first.TotalTokens), "total counts cached input and the reply's output")

	clock.advance(4 * time.Minute)
	second := usage(cachedRequest(2000, user(text("another question"))))
	assert.Equal(t, prefix, int(aws.ToInt32(second.CacheReadInputTokens)), "within its TTL the prefix is read")
	assert.Zero(t, aws.ToInt32(second.CacheWriteInputTokens))

	clock.advance(4 * time.Minute) // 8 minutes after the write, 4 after the read that refreshed it
	third := usage(cachedRequest(2000, user(text("a third"))))
	assert.Equal(t, prefix, int(aws.ToInt32(third.CacheReadInputTokens)), "a read starts the TTL again")

	clock.advance(6 * time.Minute)
	expired := usage(cachedRequest(2000, user(text("later"))))
	assert.Zero(t, aws.ToInt32(expired.CacheReadInputTokens), "past its TTL the prefix is gone")
	assert.Equal(t, prefix, int(aws.ToInt32(expired.CacheWriteInputTokens)))

	short := usage(cachedRequest(100, user(text("short"))))
	assert.Zero(t, aws.ToInt32(short.CacheWriteInputTokens), "a prefix under the model's minimum is not cached")
	assert.Zero(t, aws.ToInt32(short.CacheReadInputTokens))
}

func TestPromptCacheReadsTheLongestPrefix(t *testing.T) {
	srv := NewServer(HandlerFunc(func(ctx context.Context, req *Request) (*Reply, error) { return Text("ok"), nil }),
		func(o *Options) { o.Accounting = true })
	defer srv.Close()
	client := srv.Client()
	long := strings.Repeat("wxyz", 1500)
	turn1 := cachedRequest(1500, user(text(long), cachePointBlock("")))
	out1, err := client.Converse(context.Background(), turn1)
	require.NoError(t, err)

	turn2 := cachedRequest(1500, user(text(long), cachePointBlock("")), assistant(text("noted")), user(text(long+"!"), cachePointBlock("")))
	out2, err := client.Converse(context.Background(), turn2)
	require.NoError(t, err)
	assert.Equal(t, aws.ToInt32(out1.Usage.CacheWriteInputTokens), aws.ToInt32(out2.Usage.CacheReadInputTokens),
		"the second turn reads all the first wrote, up to its last point")
	assert.Positive(t, aws.ToInt32(out2.Usage.CacheWriteInputTokens))
}

// TestPromptCacheDetailsByTTL: a request's system prompt has a point with
// the one-hour TTL, and its message a point with five minutes. Its writes
// are listed by TTL, the hour's first, adding up to CacheWriteInputTokens.
// A request that reads them all writes none.
func TestPromptCacheDetailsByTTL(t *testing.T) {
	srv := NewServer(HandlerFunc(func(ctx context.Context, req *Request) (*Reply, error) { return Text("ok"), nil }),
		func(o *Options) { o.Accounting = true })
	defer srv.Close()
	in := cachedRequest(1200, user(text(strings.Repeat("more ", 1200)), cachePointBlock(types.CacheTTLFiveMinutes)))
	in.ModelId = aws.String(cacheLong)
	in.System[1] = systemPoint(types.CacheTTLOneHour)
	system := EstimateTokens(&Request{ConverseInput: bedrockruntime.ConverseInput{System: in.System[:1]}})
	out, err := srv.Client().Converse(context.Background(), in)
	require.NoError(t, err)
	u := out.Usage
	require.Len(t, u.CacheDetails, 2)
	assert.Equal(t, types.CacheTTLOneHour, u.CacheDetails[0].Ttl)
	assert.Equal(t, system, int(aws.ToInt32(u.CacheDetails[0].InputTokens)), "the system prompt, up to the hour's point")
	assert.Equal(t, types.CacheTTLFiveMinutes, u.CacheDetails[1].Ttl)
	assert.Equal(t, aws.ToInt32(u.CacheWriteInputTokens), aws.ToInt32(u.CacheDetails[0].InputTokens)+aws.ToInt32(u.CacheDetails[1].InputTokens))
	again, err := srv.Client().Converse(context.Background(), in)
	require.NoError(t, err)
	assert.Empty(t, again.Usage.CacheDetails, "nothing written")
}

// TestPromptCacheCountsImagesAsTheRequest: a cached prefix holding an
// image is counted as the whole request is, the image by its size, so the
// input, read and written tokens add up to the request's.
func TestPromptCacheCountsImagesAsTheRequest(t *testing.T) {
	srv := NewServer(HandlerFunc(func(ctx context.Context, req *Request) (*Reply, error) { return Text("ok"), nil }),
		func(o *Options) { o.Accounting = true })
	defer srv.Close()
	img := &types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatPng,
		Source: &types.ImageSourceMemberBytes{Value: testimage.Noise(t, 500, 500)}}} // a megabyte of base64 for some 300 tokens
	in := cachedRequest(1200, user(text("look"), img, cachePointBlock("")), assistant(text("seen")), user(text("and?")))
	total := EstimateTokens(&Request{ConverseInput: *in})
	for _, what := range []string{"written", "read"} {
		out, err := srv.Client().Converse(context.Background(), in)
		require.NoError(t, err)
		u := out.Usage
		assert.Positive(t, aws.ToInt32(u.InputTokens), "the messages after the point (%s)", what)
		assert.Equal(t, total, int(aws.ToInt32(u.InputTokens)+aws.ToInt32(u.CacheReadInputTokens)+aws.ToInt32(u.CacheWriteInputTokens)), what)
	}
}
