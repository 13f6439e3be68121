package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse"
)

// requestFlags are the flags of the Converse request fields: guardrail,
// service tier, latency and the answer's schema.
type requestFlags struct {
	guardrail *types.GuardrailConfiguration
	tier      *types.ServiceTier
	latency   *types.PerformanceConfiguration
	schema    json.RawMessage // -schema: the answer is a JSON object matching it
}

// define adds the flags of the request fields to fs, but -schema (see
// defineSchema); each checks its value as it is parsed.
func (r *requestFlags) define(fs *flag.FlagSet) {
	fs.Func("guardrail", "apply the Bedrock guardrail `ID:VERSION` (an ID or ARN; its trace is on)", func(v string) error {
		i := strings.LastIndex(v, ":")
		if i <= 0 || i == len(v)-1 {
			return fmt.Errorf("want ID:VERSION, such as gr-abc123:1 or gr-abc123:DRAFT")
		}
		r.guardrail = &types.GuardrailConfiguration{
			GuardrailIdentifier: aws.String(v[:i]),
			GuardrailVersion:    aws.String(v[i+1:]),
			Trace:               types.GuardrailTraceEnabled,
		}
		return nil
	})
	fs.Func("service-tier", "ask for the service `tier` "+strings.Join(enumNames(types.ServiceTierType("").Values()), "|"), func(v string) error {
		t := types.ServiceTierType(v)
		if !slices.Contains(t.Values(), t) {
			return fmt.Errorf("want one of %s", strings.Join(enumNames(t.Values()), ", "))
		}
		r.tier = &types.ServiceTier{Type: t}
		return nil
	})
	fs.Func("latency", "ask for `optimized` (or standard) latency, where the model offers it", func(v string) error {
		l := types.PerformanceConfigLatency(v)
		if !slices.Contains(l.Values(), l) {
			return fmt.Errorf("want one of %s", strings.Join(enumNames(l.Values()), ", "))
		}
		r.latency = &types.PerformanceConfiguration{Latency: l}
		return nil
	})
}

// defineSchema adds -schema to fs, which only a conversation at the
// terminal takes.
func (r *requestFlags) defineSchema(fs *flag.FlagSet) {
	fs.Func("schema", "answer with a JSON object matching the JSON Schema in `FILE` (validated; printed as the answer)", func(path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// A bad schema is a usage error before any model call; the flag
		// package names the file.
		if err := converse.CheckSchema(b); err != nil {
			return errors.New(strings.TrimPrefix(err.Error(), "converse: "))
		}
		r.schema = b
		return nil
	})
}

// apply sets the request fields the flags gave.
func (r *requestFlags) apply(o *converse.Options) {
	o.Request.GuardrailConfig, o.Request.ServiceTier, o.Request.PerformanceConfig = r.guardrail, r.tier, r.latency
}

func enumNames[E ~string](values []E) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}
