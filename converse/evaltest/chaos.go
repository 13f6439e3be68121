package evaltest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/tooluse/bedrock/converse"
)

// ErrChaos is the error of a call that Chaos made fail.
var ErrChaos = errors.New("evaltest: chaos: injected failure")

// FaultKind is what a Fault does to a call.
type FaultKind string

// The kinds of fault.
const (
	Fail    FaultKind = "fail"    // the call fails with ErrChaos
	Hang    FaultKind = "hang"    // the call returns only at its timeout
	Garbage FaultKind = "garbage" // the call returns text that is no answer
	Slow    FaultKind = "slow"    // the call waits Delay, then runs
)

// Fault is a fault Chaos injects into the calls of a tool.
type Fault struct {
	// Tool is the tool whose calls it hits; "" hits every tool.
	Tool string
	Kind FaultKind
	// Rate is the share of the calls hit, from 0 to 1.
	Rate float64
	// Delay is how long a Slow call waits.
	Delay time.Duration
}

// Chaos returns a tool middleware (for converse.ToolOptions.Middleware)
// that injects faults into a share of the calls, to test that an agent
// recovers. Which calls are hit is decided by seed and the call's ID
// alone. So a run with the same calls (a recording, a bedrocktest script)
// is hit the same way, whatever order concurrent calls run in. The first
// fault that hits a call applies; one of an unknown kind fails the call.
func Chaos(seed uint64, faults ...Fault) converse.ToolMiddleware {
	return func(next converse.ToolHandler) converse.ToolHandler {
		return func(ctx context.Context, call converse.Call) (any, error) {
			for i, f := range faults {
				if (f.Tool == "" || f.Tool == call.Tool) && draw(seed, i, call.ID) < f.Rate {
					return f.apply(ctx, call, next)
				}
			}
			return next(ctx, call)
		}
	}
}

// draw is a number in [0, 1) that depends on seed, the fault and the call.
func draw(seed uint64, fault int, id string) float64 {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d/%d/%s", seed, fault, id))
	return float64(binary.BigEndian.Uint64(sum[:])>>11) / (1 << 53)
}

func (f Fault) apply(ctx context.Context, call converse.Call, next converse.ToolHandler) (any, error) {
	switch f.Kind {
	case Fail:
		return nil, ErrChaos
	case Hang:
		<-ctx.Done()
		return nil, ctx.Err()
	case Garbage:
		return "\x7f\x00}{ garbage ]] " + call.ID, nil
	case Slow:
		select {
		case <-time.After(f.Delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	default:
		return nil, fmt.Errorf("evaltest: chaos: unknown fault kind %q", f.Kind)
	}
	return next(ctx, call)
}
