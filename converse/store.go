package converse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Store keeps the states of conversations by session id. A Conversation
// with Options.Store and Options.SessionID saves its state at every step
// boundary; Load and Restore bring it back. Load of an unknown id returns an
// error matching fs.ErrNotExist. Save must replace the state whole, never
// leave a torn one: a crash during Save leaves the previous state.
type Store interface {
	Load(ctx context.Context, id string) (*State, error)
	Save(ctx context.Context, id string, st *State) error
}

// FileStore is a Store keeping each session in a file of Dir named by its
// id, in the JSON form of State, readable by its owner only (0600). A Save
// is atomic: it writes a temporary file in Dir, syncs it, renames it over
// the session's file and syncs Dir, so a crash leaves the old state or the
// new one. Saves of different sessions may run concurrently; saves of one
// session must not (a Conversation's are serialized).
type FileStore struct {
	Dir string
}

// path is the session's file. An id must be a plain file name: no
// separator, not "." or "..", and no leading dot (temporary files have one).
func (s FileStore) path(id string) (string, error) {
	if id == "" || strings.ContainsAny(id, `/\`+"\x00") || strings.HasPrefix(id, ".") || filepath.Base(id) != id {
		return "", fmt.Errorf("converse: session id %q is not a plain file name", id)
	}
	return filepath.Join(s.Dir, id), nil
}

// Load reads the state of the session id.
func (s FileStore) Load(ctx context.Context, id string) (*State, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, err := s.path(id)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("converse: load session: %w", err)
	}
	st := &State{}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("converse: load session %s: %w", path, err)
	}
	return st, nil
}

// Save writes the state of the session id, atomically.
func (s FileStore) Save(ctx context.Context, id string, st *State) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	path, err := s.path(id)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if s.Dir != "" {
		if err := os.MkdirAll(s.Dir, 0o700); err != nil {
			return fmt.Errorf("converse: save session: %w", err)
		}
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+id+".tmp-*") // 0600
	if err != nil {
		return fmt.Errorf("converse: save session: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("converse: save session: %w", err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("converse: save session: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("converse: save session: %w", err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("converse: save session: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes a rename in dir durable. Windows cannot sync a directory;
// its renames are durable once they return.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("converse: save session: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("converse: save session: sync %s: %w", dir, err)
	}
	return nil
}

// checkSession rejects a Store without a SessionID, or the reverse, and an
// id a FileStore cannot hold, before anything is sent or saved.
func (c *Conversation) checkSession() error {
	if (c.opts.Store == nil) != (c.opts.SessionID == "") {
		return errors.New("converse: Options.Store and Options.SessionID go together")
	}
	if fs, ok := c.opts.Store.(FileStore); ok {
		_, err := fs.path(c.opts.SessionID)
		return err
	}
	return nil
}

// save saves the conversation's state in Options.Store, if set, at a step
// boundary of turn. Cancellation does not stop it: what happened must be
// kept.
func (c *Conversation) save(ctx context.Context, turn int) error {
	if c.opts.Store == nil {
		return nil
	}
	st := c.State()
	if err := c.opts.Store.Save(context.WithoutCancel(ctx), c.opts.SessionID, st); err != nil {
		return fmt.Errorf("save session %q: %w", c.opts.SessionID, err)
	}
	c.emit(StateSaved{SessionID: c.opts.SessionID, Turn: turn, Messages: len(st.Messages), Pending: len(st.Pending)})
	return nil
}
