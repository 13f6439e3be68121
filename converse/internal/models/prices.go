package models

import "strings"

// Prices are a model's on-demand prices in US dollars per million tokens.
type Prices struct {
	Input, Output, CacheRead, CacheWrite float64
	CacheWrite1h                         float64 // the one-hour TTL's writes; 0 for none
}

// priceTable is the on-demand price list of the text models whose prices
// are known here, in US dollars per million tokens:
//
//	model                        input  output  cache read  cache write  1h cache write
//	Claude Fable 5.1 *           10.00   50.00        0.25        12.50           20.00
//	Claude Fable 5 *             10.00   50.00        1.00        12.50           20.00
//	Claude Opus 5 *               5.00   25.00        0.50         6.25           10.00
//	Claude Opus 4.5 to 4.8 *      5.00   25.00        0.50         6.25           10.00
//	Claude Sonnet 5, 5.5 *        2.00   10.00        0.20         2.50            4.00
//	Claude Opus 4, 4.1           15.00   75.00        1.50        18.75           30.00
//	Claude Sonnet 4.5, 4.6 *      3.00   15.00        0.30         3.75            6.00
//	Claude Sonnet 4, 3.7          3.00   15.00        0.30         3.75            6.00
//	Claude Haiku 4.5 *            1.00    5.00        0.10         1.25            2.00
//	Claude 3.5 Haiku              0.80    4.00        0.08         1.00            1.60
//	Claude 3 Haiku                0.25    1.25           -            -               -
//	Nova Premier                  2.50   12.50       0.625         2.50               -
//	Nova Pro                      0.80    3.20        0.20         0.80               -
//	Nova Lite                     0.06    0.24       0.015         0.06               -
//	Nova Micro                   0.035    0.14     0.00875        0.035               -
//
// (*) The prices of the global cross-region inference profile ("global."
// prefix); in-region calls and the geographic profiles (us., eu., apac.,
// jp., au., ...) cost 10% more.
//
// The sources of the figures, as read on 2026-12-01 (stored copies of the
// pages, not the live ones):
//
//   - Claude: Anthropic's own pricing page
//     (platform.claude.com/docs/en/docs/about-claude/pricing, "Model
//     pricing": base input, output, cache hits, the 5-minute cache
//     writes, 1.25 times the input price, and the 1-hour cache writes,
//     twice the input price). Those are the prices of
//     Anthropic's API. That Bedrock charges the same on demand could not be
//     confirmed on an AWS page: aws.amazon.com/bedrock/pricing fills its
//     figures in with a script, and no copy of it with figures was to be
//     had; only third-party pages say the two agree.
//   - The regional premium: Anthropic's "Claude on Amazon Bedrock" page
//     says that from Claude Sonnet 4.5 on, Bedrock has global and regional
//     endpoints and that the regional ones cost more; the figure of 10%
//     is from third-party pages only.
//   - Nova: no AWS page with figures either. The input and output prices
//     are those two third-party transcriptions agree on, one of AWS's
//     pricing page (2025-07-20), one of the AWS Price List Bulk API for
//     us-east-1 (published 2026-09-01); the cache-read price, a quarter of
//     the input's, is in the first only. Neither lists a cache-write
//     price, so cache writes are priced as input: an inference, not a
//     published figure.
//
// The rows of Claude Opus 4.7 to 5, Sonnet 5 and 5.5, and Fable 5 and 5.1
// were read on 2026-12-04, with the same caveats. They come from the same
// pricing page and from Anthropic's model overviews
// (platform.claude.com/docs/models/<model>/overview, "Pricing"). Claude Opus
// 5.5 and Fable 5.2 have no price here: their overviews give input and output
// ($4 and $20, $8 and $40), but no page read gives their cache prices. Claude
// Haiku 5.5 has none either: its price depends on the prompt's length, which
// this table does not model. Their rows keep a shorter prefix's price off
// them.
//
// Claude 3 Haiku has cache prices at Anthropic, but Bedrock's prompt caching
// guide (docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html)
// does not list it among its models, so none are here. Claude 3.5 Sonnet has
// no price: Anthropic no longer lists it, and third-party pages disagree ($3
// and $15 in a 2025 copy of AWS's page, $6 and $30 in a 2026 one). Claude
// models newer than these have no price rather than an older model's by
// prefix. Latency-optimized inference and the flex and priority service tiers
// cost otherwise, and some models' prices differ by region; none of that is
// modelled: set Options.Prices.
var priceTable = []priceEntry{
	{"anthropic", "claude-fable-5-2", unpriced, false},
	{"anthropic", "claude-fable-5-1", Prices{10, 50, 0.25, 12.5, 20}, true},
	{"anthropic", "claude-fable-5", Prices{10, 50, 1, 12.5, 20}, true},
	{"anthropic", "claude-opus-5-5", unpriced, false},
	{"anthropic", "claude-opus-5", Prices{5, 25, 0.5, 6.25, 10}, true},
	{"anthropic", "claude-opus-4-8", Prices{5, 25, 0.5, 6.25, 10}, true},
	{"anthropic", "claude-opus-4-7", Prices{5, 25, 0.5, 6.25, 10}, true},
	{"anthropic", "claude-opus-4-5", Prices{5, 25, 0.5, 6.25, 10}, true},
	{"anthropic", "claude-opus-4-6", Prices{5, 25, 0.5, 6.25, 10}, true},
	{"anthropic", "claude-sonnet-5", Prices{2, 10, 0.2, 2.5, 4}, true}, // and 5.5
	{"anthropic", "claude-haiku-5", unpriced, false},
	{"anthropic", "claude-opus-4-1", Prices{15, 75, 1.5, 18.75, 30}, false},
	{"anthropic", "claude-opus-4-20", Prices{15, 75, 1.5, 18.75, 30}, false}, // dated: Opus 4 alone
	{"anthropic", "claude-sonnet-4-5", Prices{3, 15, 0.3, 3.75, 6}, true},
	{"anthropic", "claude-sonnet-4-6", Prices{3, 15, 0.3, 3.75, 6}, true},
	{"anthropic", "claude-sonnet-4-20", Prices{3, 15, 0.3, 3.75, 6}, false},
	{"anthropic", "claude-3-7-sonnet", Prices{3, 15, 0.3, 3.75, 6}, false},
	{"anthropic", "claude-haiku-4-5", Prices{1, 5, 0.1, 1.25, 2}, true},
	{"anthropic", "claude-3-5-haiku", Prices{0.8, 4, 0.08, 1, 1.6}, false},
	{"anthropic", "claude-3-haiku", Prices{0.25, 1.25, 0, 0, 0}, false},
	{"amazon", "nova-premier", Prices{2.5, 12.5, 0.625, 2.5, 0}, false},
	{"amazon", "nova-pro", Prices{0.8, 3.2, 0.2, 0.8, 0}, false},
	{"amazon", "nova-lite", Prices{0.06, 0.24, 0.015, 0.06, 0}, false},
	{"amazon", "nova-micro", Prices{0.035, 0.14, 0.00875, 0.035, 0}, false},
}

// priceEntry is a row of priceTable.
type priceEntry struct {
	provider, prefix string
	prices           Prices
	regionalPremium  bool // 10% more outside the global profile
}

// unpriced marks a row whose model has no confirmed price: the longest
// prefix then finds no price, rather than a shorter prefix's.
var unpriced = Prices{Input: -1}

// longestPrefix is the index of the entry of table (whose provider and
// name prefix key gives) of m's provider with the longest prefix of m's
// name, or -1.
func longestPrefix[E any](m Model, table []E, key func(E) (provider, prefix string)) int {
	best, bestLen := -1, -1
	for i, e := range table {
		provider, prefix := key(e)
		if provider == m.Provider && strings.HasPrefix(m.Name, prefix) && len(prefix) > bestLen {
			best, bestLen = i, len(prefix)
		}
	}
	return best
}

// PricesOf returns the on-demand prices of modelID (a model ID, inference
// profile or ARN) from the price table, and whether they are known. The
// table is matched by the longest prefix of the model name.
func PricesOf(modelID string) (Prices, bool) {
	best := longestPrefix(Parse(modelID), priceTable, func(e priceEntry) (string, string) { return e.provider, e.prefix })
	if best < 0 || priceTable[best].prices == unpriced {
		return Prices{}, false
	}
	e := priceTable[best]
	p := e.prices
	if e.regionalPremium && !isGlobal(modelID) {
		p = Prices{p.Input * 1.1, p.Output * 1.1, p.CacheRead * 1.1, p.CacheWrite * 1.1, p.CacheWrite1h * 1.1}
	}
	return p, true
}

// isGlobal reports whether modelID names a global cross-region inference
// profile, by ID or ARN.
func isGlobal(modelID string) bool {
	id := strings.ToLower(strings.TrimSpace(modelID))
	if i := strings.LastIndex(id, "/"); i >= 0 {
		id = id[i+1:]
	}
	return strings.HasPrefix(id, "global.")
}
