package converse

import (
	"context"
	"errors"
)

// Session is where a conversation is saved: the session ID in a Store. A
// Conversation with Options.Session saves its state there at every step
// boundary.
type Session struct {
	Store Store
	ID    string // for a filestore.Store, a plain file name
}

// Store keeps the states of conversations by session id. A Conversation
// with Options.Session saves its state at every step boundary; Load and
// Restore bring it back. Load of an unknown id returns an
// error matching fs.ErrNotExist. Save must replace the state whole, never
// leave a torn one: a crash during Save leaves the previous state.
//
// Saves are versioned, so that two writers of one session never lose each
// other's steps. Load sets State.Revision to the session's revision. Save
// saves st only if the session is still at st.Revision (absent for 0), making
// it the next and setting st.Revision to it. Otherwise it fails with an error
// matching ErrSessionChanged and leaves the session as it was. A Send whose
// save fails so stops with that error.
type Store interface {
	Load(ctx context.Context, id string) (*State, error)
	Save(ctx context.Context, id string, st *State) error
}

// Holder is a Store whose sessions a Send, Resume or Stop holds for its
// run, so that no other conversation runs them meanwhile. Hold takes the
// session id for a conversation whose state is st, before anything is sent
// or saved, until release is called. It fails at once with an error
// matching ErrSessionLocked if another holds it, or ErrSessionChanged if
// the session is not at st.Revision.
type Holder interface {
	Store
	Hold(ctx context.Context, id string, st *State) (release func(), err error)
}

var (
	// ErrSessionLocked is the error of a Send, Resume or Stop of a session
	// that another holds (see Holder), in this process or another.
	ErrSessionLocked = errors.New("session in use")
	// ErrSessionChanged is the error of a Save, and so of a Send or Resume, of
	// a session that another conversation saved since this one last saved or
	// was restored from it. Its State.Revision is not the session's. Going on
	// would lose what the other saved. Load and Restore it again. Every
	// Store's conflict matches it.
	ErrSessionChanged = errors.New("session changed")
)

// holdSession rejects a Session without a Store or an ID, and holds the
// session of a Holder, before anything is sent or saved, for the
// conversation whose state is state's.
func holdSession(ctx context.Context, s *Session, state func() *State) (release func(), err error) {
	if s == nil {
		return func() {}, nil
	}
	if s.Store == nil || s.ID == "" {
		return nil, errors.New("converse: Options.Session needs a Store and an ID")
	}
	h, ok := s.Store.(Holder)
	if !ok {
		return func() {}, nil
	}
	return h.Hold(ctx, s.ID, state())
}
