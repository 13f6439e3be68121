package models

// burndownTable is the rate at which some model families use Bedrock's
// token quotas (tokens per minute and per day): those that burn their
// output tokens faster than 1:1. Entries are matched by the longest prefix
// of the model name:
//
//	model                                               output burndown
//	Claude 3.7 Sonnet, Sonnet 4, Opus 4, Sonnet 4.5 (a)              5x
//	Claude Opus 4.1, 4.5, 4.6, Sonnet 4.6, Haiku 4.5 (b)             5x
//	any other model                                                  1x
//
// (a) AWS's user guide says so in "How tokens are counted in Amazon Bedrock"
// (https://docs.aws.amazon.com/bedrock/latest/userguide/quotas-token-burndown.html).
// It reads: "The burndown rate for the following models is 5x for output
// tokens (1 output token consumes 5 tokens from your quotas): Anthropic
// Claude Opus 4, Anthropic Claude Sonnet 4, ...". The list is cut there in
// the stored copy of the page. The user guide's "Global cross-Region
// inference" gives it whole
// (https://docs.aws.amazon.com/bedrock/latest/userguide/global-cross-region-inference.html):
// "Anthropic Claude Opus 4, Anthropic Claude Sonnet 4.5, Anthropic Claude
// Sonnet 4, Anthropic Claude 3.7 Sonnet. For all other models, the burndown
// rate is 1:1 (1 output token consumes 1 token from your quota). For input
// tokens, the token to quota ratio is 1:1. The calculation for the total
// number of tokens per request is as follows: Input token count + Cache write
// input tokens + (Output token count x Burndown rate)". Of the burndown page,
// third-party copies quote "CacheReadInputTokens don't contribute to this
// calculation and are not counted toward your quota".
//
// (b) Newer than the AWS pages that could be read: only third-party
// transcriptions of a later version of the burndown page say 5x for every
// Anthropic model of version 4.7 and below. They are here because a
// Limiter that counts too much waits a little longer, while one that counts
// too little is throttled. Claude models newer than these are 1x, as
// unknown, whatever those transcriptions say of them (higher rates).
var burndownTable = []burndownEntry{
	{"anthropic", "claude-3-7-sonnet", 5},
	{"anthropic", "claude-sonnet-4-20", 5}, // dated: Sonnet 4 alone
	{"anthropic", "claude-opus-4-20", 5},   // dated: Opus 4 alone
	{"anthropic", "claude-sonnet-4-5", 5},
	{"anthropic", "claude-opus-4-1", 5},
	{"anthropic", "claude-opus-4-5", 5},
	{"anthropic", "claude-opus-4-6", 5},
	{"anthropic", "claude-sonnet-4-6", 5},
	{"anthropic", "claude-haiku-4-5", 5},
}

// burndownEntry is a row of burndownTable.
type burndownEntry struct {
	provider, prefix string
	output           int
}

// OutputBurndown returns how many tokens of Bedrock's token quotas one
// output token of the model uses: 5 for the Claude models of
// burndownTable, 1 for any other.
func (m Model) OutputBurndown() int {
	best := longestPrefix(m, burndownTable, func(e burndownEntry) (string, string) { return e.provider, e.prefix })
	if best < 0 {
		return 1
	}
	return burndownTable[best].output
}

// QuotaTokens returns what a call of the model uses of Bedrock's token
// quotas once answered, as the burndown page counts it. That is its input
// tokens, plus the tokens it wrote to the prompt cache, plus its output
// tokens at the model's burndown rate. The input tokens are Bedrock's
// inputTokens, which leave the cached ones out. The tokens it read from
// the cache count for nothing.
func (m Model) QuotaTokens(input, cacheWrite, output int) int {
	return input + cacheWrite + output*m.OutputBurndown()
}
