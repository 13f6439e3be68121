package temporal

import (
	"fmt"

	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// DefaultPayloadLimit is the payload limit when Options.PayloadLimit is
// zero. Temporal's server refuses a payload over its limit.blobSize.error,
// 2 MiB by default. The 64 KiB less leave room for what a codec adds to a
// payload and for the answer a Result adds to the request's history.
const DefaultPayloadLimit = 2<<20 - 64<<10

// NoPayloadLimit, as Options.PayloadLimit, turns the payload check off:
// for workers and clients whose DataConverter keeps large payloads out of
// Temporal, such as DataConverter's claim check.
const NoPayloadLimit = -1

// PayloadTooLargeType is the type of the non-retryable ApplicationError
// that fails a workflow whose next model request is over the payload limit.
const PayloadTooLargeType = "converse.PayloadTooLarge"

// payloadLimit is the limit Options.PayloadLimit sets, 0 if the check is
// off.
func (a *Agent) payloadLimit() int {
	switch l := a.opts.PayloadLimit; {
	case l < 0:
		return 0
	case l == 0:
		return DefaultPayloadLimit
	default:
		return l
	}
}

// tooLarge returns a *payloadError if v, as Temporal's default data
// converter encodes it, is larger than the agent's payload limit. Temporal
// measures the same: the size of the Payloads message. The encoding is a
// function of v alone, so the workflow's code may call it.
func (a *Agent) tooLarge(what string, v any) error {
	limit := a.payloadLimit()
	if limit == 0 {
		return nil
	}
	p, err := converter.GetDefaultDataConverter().ToPayloads(v)
	if err != nil {
		return fmt.Errorf("temporal: %s: %w", what, err)
	}
	if size := proto.Size(p); size > limit {
		return &payloadError{what: what, size: size, limit: limit}
	}
	return nil
}

// payloadError is a payload over the limit.
type payloadError struct {
	what        string
	size, limit int
}

func (e *payloadError) Error() string { return "temporal: " + e.reason() }

// reason says what is too large, by how much, and how to lift the limit.
func (e *payloadError) reason() string {
	return fmt.Sprintf("the %s is %d bytes, over the payload limit of %d bytes (Options.PayloadLimit; "+
		"Temporal's limit.blobSize.error is 2 MiB by default): a claim check (DataConverter) with NoPayloadLimit lifts it",
		e.what, e.size, e.limit)
}
