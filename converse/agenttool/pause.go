package agenttool

import (
	"context"
	"errors"

	"github.com/tooluse/bedrock/converse"
)

// pause returns the pause of conv, err, for the caller. A Store holds the
// paused conversation already, under the call's session. Without one,
// the pause carries its State up to the caller's, which hands it back to
// the call's next run (converse.Caller.State), in whatever process.
func (g *agent) pause(ctx context.Context, conv *converse.Conversation, err error) error {
	var p *converse.PausedError
	if g.session(ctx) != nil || !errors.As(err, &p) {
		return err
	}
	return &converse.PausedError{Pending: p.Pending, State: conv.State()}
}
