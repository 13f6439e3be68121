// Package quota paces the model calls of conversations by a quota of
// requests and tokens per minute that they share, such as a Bedrock
// account's quota for a model in a region. A Limiter decorates the
// converse.Client the conversations hold:
//
//	lim := quota.NewLimiter(400, 200000)
//	c := converse.New(lim.Client(bedrockruntime.NewFromConfig(cfg)), model, reg)
//
// Every conversation holding a client of the same Limiter shares its quota.
//
// It paces every model call of a conversation holding such a client:
// Send's, and the step API's, so a Temporal agent's model activities too.
//
// # Measured
//
// 500 conversations ran against bedrocktest's Options.Quota (see
// BENCHMARKS.md). With the Limiter at the quota, none failed and no call
// was throttled. Set at 1.5 to 4 times the quota, none failed and under 3%
// of the calls were throttled. Without it, all failed with the SDK's
// standard retries. With the SDK's adaptive retry mode, 0 or 1 failed, but
// 6% of the calls were throttled, in bursts.
package quota
