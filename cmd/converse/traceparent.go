package main

import (
	"context"
	"os"
	"strings"

	"go.opentelemetry.io/otel/propagation"
)

// withTraceParent returns ctx holding the remote span of the TRACEPARENT
// and TRACESTATE environment variables, the W3C trace context in the
// environment as OpenTelemetry's environment carriers name it. A program
// that runs converse under its own trace (a CI step, promptfoo's providers)
// then finds converse's spans in that trace. Without TRACEPARENT, or with
// one that does not parse, ctx is returned as it is.
func withTraceParent(ctx context.Context) context.Context {
	return propagation.TraceContext{}.Extract(ctx, environment{})
}

// environment is the process's environment as a propagation carrier:
// keys are the upper-case names of variables. It is read only.
type environment struct{}

func (environment) Get(key string) string { return os.Getenv(strings.ToUpper(key)) }
func (environment) Set(string, string)    {}
func (environment) Keys() []string        { return []string{"traceparent", "tracestate"} }
