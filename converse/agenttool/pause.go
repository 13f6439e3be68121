package agenttool

import (
	"context"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/tools"
)

// pause keeps conv, which paused, for the call's next run, which resumes
// it with the caller's decisions. A Store holds it already, under the
// call's session; without one the tool keeps it in memory, by toolUseId,
// for a Resume of the caller in the same process.
func (g *agent) pause(ctx context.Context, conv *converse.Conversation) {
	if g.session(ctx) != nil {
		return
	}
	g.pausedMu.Lock()
	defer g.pausedMu.Unlock()
	if g.paused == nil {
		g.paused = map[string]*converse.State{}
	}
	g.paused[tools.CallID(ctx)] = conv.State()
}

// unpause takes the conversation that the call paused in memory, if any.
func (g *agent) unpause(ctx context.Context) *converse.State {
	g.pausedMu.Lock()
	defer g.pausedMu.Unlock()
	id := tools.CallID(ctx)
	st := g.paused[id]
	delete(g.paused, id)
	return st
}
