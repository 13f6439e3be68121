package agenttool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/tooluse/bedrock/converse"
)

// keptID is the session of the conversation a caller keeps with the agent
// (Agent.Keep): the agent's name beside the caller's session ID, or the
// name alone without one.
func (g *agent) keptID(ctx context.Context) string {
	if caller := converse.CallerOf(ctx).Session(); caller != nil {
		return caller.ID + "." + g.Name
	}
	return g.Name
}

// store is where the kept conversations are: Agent.Store, the caller's
// Store, or nil for memory.
func (g *agent) store(ctx context.Context) converse.Store {
	if g.Store != nil {
		return g.Store
	}
	if caller := converse.CallerOf(ctx).Session(); caller != nil {
		return caller.Store
	}
	return nil
}

// kept is the state of the conversation the caller keeps, to continue in
// the call's own session: nil without Agent.Keep, or before its first call
// ended.
func (g *agent) kept(ctx context.Context) (*converse.State, error) {
	if !g.Keep {
		return nil, nil
	}
	id, store := g.keptID(ctx), g.store(ctx)
	if store == nil {
		return g.memory[id], nil
	}
	st, err := store.Load(ctx, id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("agenttool: %s: load the kept conversation %s: %w", g.Name, id, err)
	}
	// The call's own session is new: the state goes there as a new one.
	st.Revision, st.StoreData = 0, nil
	return st, nil
}

// keep makes conv, which answered its call, the conversation the caller
// keeps, with Agent.Keep.
func (g *agent) keep(ctx context.Context, conv *converse.Conversation) error {
	if !g.Keep {
		return nil
	}
	st, id, store := conv.State(), g.keptID(ctx), g.store(ctx)
	if store == nil {
		if g.memory == nil {
			g.memory = map[string]*converse.State{}
		}
		g.memory[id] = st
		return nil
	}
	// Saved over the kept session as it stands: the calls of a caller
	// keep it one after another.
	st.Revision, st.StoreData = 0, nil
	old, err := store.Load(ctx, id)
	switch {
	case err == nil:
		st.Revision, st.StoreData = old.Revision, old.StoreData
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("agenttool: %s: keep the conversation: %w", g.Name, err)
	}
	if err := store.Save(ctx, id, st); err != nil {
		return fmt.Errorf("agenttool: %s: keep the conversation: %w", g.Name, err)
	}
	return nil
}
