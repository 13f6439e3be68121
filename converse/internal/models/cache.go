package models

import "strings"

// Cache is what Bedrock's prompt caching table says of a model: where it
// takes cachePoint blocks, how long a prefix must be to be cached, and
// whether it accepts the one-hour TTL.
type Cache struct {
	// MinTokens is the minimum number of tokens of a prompt prefix ending at
	// a cache checkpoint; a shorter prefix is not cached (Bedrock accepts
	// the point and caches nothing).
	MinTokens int
	// Tools, System and Messages are the fields that accept cache points:
	// toolConfig.tools, system and messages.
	Tools, System, Messages bool
	// LongTTL reports that the model takes ttl "1h" as well as the default
	// "5m".
	LongTTL bool
	// AfterToolResult reports that a cache point may directly follow a
	// toolResult block; Nova rejects one there.
	AfterToolResult bool
}

// MaxCachePoints is the most cache checkpoints one request may hold, in
// all its fields together.
const MaxCachePoints = 4

// cacheTable is Bedrock's table of models with prompt caching. It is from
// the user guide "Prompt caching for faster model inference"
// (docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html,
// section "Supported models, Regions, and limits"). The models that take
// ttl "1h" are from the AWS news "Amazon Bedrock now supports one-hour
// duration for prompt caching" (2026-01):
//
//	model              min tokens  fields                    1h TTL
//	Claude 3.7 Sonnet       1,024  tools, system, messages   no
//	Claude 3.5 Haiku        2,048  tools, system, messages   no
//	Claude Opus 4, 4.1      1,024  tools, system, messages   no
//	Claude Sonnet 4         1,024  tools, system, messages   no
//	Claude Sonnet 4.5       1,024  tools, system, messages   yes
//	Claude Sonnet 4.6       2,048  tools, system, messages   yes
//	Claude Opus 4.5, 4.6    4,096  tools, system, messages   yes
//	Claude Haiku 4.5        4,096  tools, system, messages   yes
//	Nova Micro, Lite,       1,000  system, messages          no
//	  Pro, Premier
//
// Every model takes at most MaxCachePoints points. Nova rejects a cache
// point in toolConfig.tools ("extraneous key [cachePoint] is not
// permitted"). It rejects one right after a toolResult block too. AWS's
// own sample client skips those for Nova: "placing a cachePoint right
// after toolResult causes an error" (github.com/aws-samples/bedrock-engineer,
// src/common/utils/promptCacheUtils.ts). Nova 2 is not in the table. It
// rejects cache points in the messages of a tool loop
// (github.com/zeroclaw-labs/zeroclaw pull 8943). The entries are matched
// by prefix of the model name, longest first. A Claude model of generation
// 4 or later that the table does not list yet gets the most cautious of
// its family's rules (4,096 tokens, no 1h TTL).
var cacheTable = []struct {
	provider, prefix string
	rules            Cache
}{
	{"anthropic", "claude-3-7-sonnet", claude(1024, false)},
	{"anthropic", "claude-3-5-haiku", claude(2048, false)},
	{"anthropic", "claude-opus-4-6", claude(4096, true)},
	{"anthropic", "claude-opus-4-5", claude(4096, true)},
	{"anthropic", "claude-opus-4-1", claude(1024, false)},
	{"anthropic", "claude-opus-4-2", claude(1024, false)}, // claude-opus-4-20250514, not a later 4.x
	{"anthropic", "claude-sonnet-4-6", claude(2048, true)},
	{"anthropic", "claude-sonnet-4-5", claude(1024, true)},
	{"anthropic", "claude-sonnet-4-2", claude(1024, false)}, // claude-sonnet-4-20250514
	{"anthropic", "claude-haiku-4-5", claude(4096, true)},
	{"amazon", "nova-micro", nova},
	{"amazon", "nova-lite", nova},
	{"amazon", "nova-pro", nova},
	{"amazon", "nova-premier", nova},
}

func claude(minTokens int, longTTL bool) Cache {
	return Cache{MinTokens: minTokens, Tools: true, System: true, Messages: true, LongTTL: longTTL, AfterToolResult: true}
}

var nova = Cache{MinTokens: 1000, System: true, Messages: true}

// Cache returns the model's prompt caching rules, or false for a model
// without prompt caching (or one the ID does not name).
func (m Model) Cache() (Cache, bool) {
	for _, e := range cacheTable {
		if m.Provider == e.provider && strings.HasPrefix(m.Name, e.prefix) {
			return e.rules, true
		}
	}
	if m.Provider == "anthropic" && laterClaude(m.Name) {
		return claude(4096, false), true
	}
	return Cache{}, false
}

// laterClaude reports a Claude model named claude-<family>-<n> with n of 4
// or more, such as claude-sonnet-5.
func laterClaude(name string) bool {
	rest, ok := strings.CutPrefix(name, "claude-")
	if !ok {
		return false
	}
	family, gen, ok := strings.Cut(rest, "-")
	if !ok || family == "" || gen == "" || family[0] < 'a' || family[0] > 'z' {
		return false
	}
	return gen[0] >= '4' && gen[0] <= '9'
}
