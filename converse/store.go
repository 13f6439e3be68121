package converse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/wire"
)

// Session is where a conversation is saved: the session ID in a Store. A
// Conversation with Options.Session saves its state there at every step
// boundary.
type Session struct {
	Store Store
	ID    string // for a FileStore, a plain file name
}

// Store keeps the states of conversations by session id. A Conversation
// with Options.Session saves its state at every step boundary; Load and
// Restore bring it back. Load of an unknown id returns an
// error matching fs.ErrNotExist. Save must replace the state whole, never
// leave a torn one: a crash during Save leaves the previous state.
//
// Saves are versioned, so that two writers of one session never lose each
// other's steps: Load sets State.Revision to the session's revision, and
// Save saves st only if the session is still at st.Revision (absent for
// 0), making it the next and setting st.Revision to it; otherwise it fails
// with an error matching ErrSessionChanged and leaves the session as it
// was. A Send whose save fails so stops with that error.
type Store interface {
	Load(ctx context.Context, id string) (*State, error)
	Save(ctx context.Context, id string, st *State) error
}

var (
	// ErrSessionLocked is the error of a Send or Resume of a FileStore
	// session that another Send or Resume holds, in this process or
	// another; the error names the process.
	ErrSessionLocked = errors.New("session in use")
	// ErrSessionChanged is the error of a Save, and so of a Send or
	// Resume, of a session that another conversation saved since this one
	// last saved or was restored from it (its State.Revision is not the
	// session's): going on would lose what the other saved. Load and
	// Restore it again. Every Store's conflict matches it.
	ErrSessionChanged = errors.New("session changed")
)

// FileStore is a Store keeping each session in a file of Dir named by its
// id, readable by its owner only (0600).
//
// The file is a log, so that a step costs what it adds, not the whole
// history: its first line is the JSON form of a State with the session's
// revision added ("revision": N), each further line a step record, {"keep":
// K, "messages": [...], "openTurn": {...}, "usage": {...}, "revision": N}:
// the state after the step is the first K messages of the state before,
// then the record's messages, with the record's open turn (none if absent),
// usage and revision (one more than the line before if absent; 1 for a
// first line without one). A Save appends one record and syncs the file once. It
// writes the whole state instead (to a temporary file in Dir, synced,
// renamed over the session's file, Dir synced) for a new file, a history
// that lost messages (trimmed, or an unanswered prompt replaced), a file it
// did not write or read last, or one whose superseded records make up half
// of it. A crash during a Save leaves the old state or the new one: a torn
// last record is ignored. A file of the whole State alone, as written
// before, is a log of no records.
//
// A Send or Resume of a conversation holds its session: it takes an
// exclusive lock (flock(2)) on the file .ID.lock beside the session's, and
// fails at once with ErrSessionLocked if another holds it, or with
// ErrSessionChanged if the file is not at the conversation's revision.
// Each Save checks the revision again, so that a writer that lost its lock
// (its lock file removed, say) is caught by it too. Where flock is not
// available (Windows, Plan 9, Solaris), no lock is taken; the revision
// checks still are, though a check and its write are then not atomic.
// Stale temporary files of a crashed Save (.ID.tmp-N) are removed when the
// session is next held or saved whole. Saves of different sessions may run
// concurrently; saves of one session must not.
type FileStore struct {
	Dir string
}

// fileLog is what a FileStore knows of a session's file after reading or
// writing it, for appending the next step. It is never changed once made.
type fileLog struct {
	path     string
	info     os.FileInfo     // the file when read or written, to see whether it changed since
	end      int64           // the end of its last whole record
	messages []types.Message // the history it holds
	waste    int64           // bytes of records that later ones supersede
	last     int64           // bytes of the last record but its messages, superseded by the next
	revision int64           // the revision of its last record
}

// unchanged reports whether the file at l.path is still as l saw it.
func (l *fileLog) unchanged(cur os.FileInfo) bool {
	return os.SameFile(l.info, cur) && cur.Size() == l.info.Size() && cur.ModTime().Equal(l.info.ModTime())
}

// path is the session's file. An id must be a plain file name: no
// separator, not "." or "..", and no leading dot (temporary and lock files
// have one).
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
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("converse: load session: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("converse: load session: %w", err)
	}
	b := make([]byte, info.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("converse: load session: %w", err)
	}
	st, err := readLog(b)
	if err != nil {
		return nil, fmt.Errorf("converse: load session %s: %w", path, err)
	}
	st.log.path, st.log.info = path, info
	return st, nil
}

// readLog reads a session log: a state, then step records, one a line.
func readLog(b []byte) (*State, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var base stateJSON
	if err := dec.Decode(&base); err != nil {
		return nil, fmt.Errorf("converse: state: %w", err)
	}
	msgs, err := base.messages()
	if err != nil {
		return nil, err
	}
	end := dec.InputOffset()
	log := &fileLog{last: end - int64(len(base.Messages)), revision: max(base.Revision, 1)}
	ot, usage, calls, stopped := base.OpenTurn, base.Usage, base.ToolCalls, base.Stopped
	recs := readRecords(nil, base.Turns, 0, len(msgs))
	for rest := b[end:]; len(bytes.TrimSpace(rest)) > 0; {
		n := bytes.IndexByte(rest, '\n')
		if n < 0 {
			break // torn by a crash
		}
		line := rest[:n]
		if len(bytes.TrimSpace(line)) == 0 { // the end of the state's line
			end += int64(n + 1)
			rest = rest[n+1:]
			continue
		}
		var rec stepJSON
		if err := json.Unmarshal(line, &rec); err != nil {
			if len(bytes.TrimSpace(rest[n+1:])) == 0 {
				break // torn by a crash
			}
			return nil, fmt.Errorf("converse: state: the record at byte %d: %w", end, err)
		}
		if rec.Keep < 0 || rec.Keep > len(msgs) {
			return nil, fmt.Errorf("converse: state: the record at byte %d keeps %d of %d messages", end, rec.Keep, len(msgs))
		}
		more, err := wire.DecodeKnownMessages(rec.Messages, rec.Keep)
		if err != nil {
			return nil, fmt.Errorf("converse: state: %w", err)
		}
		msgs, ot, usage, calls, stopped = append(msgs[:rec.Keep:rec.Keep], more...), rec.OpenTurn, rec.Usage, rec.ToolCalls, rec.Stopped
		recs = readRecords(recs, rec.Turns, rec.Keep-1, len(msgs))
		log.revision++
		if rec.Revision > 0 {
			log.revision = rec.Revision
		}
		log.waste += log.last
		log.last = int64(len(line) + 1 - len(rec.Messages))
		end += int64(n + 1)
		rest = rest[n+1:]
	}
	st := &State{}
	if err := st.set(base.ModelID, msgs, ot, usage); err != nil {
		return nil, err
	}
	log.end, log.messages = end, msgs
	st.log, st.Turns, st.Revision, st.ToolCalls, st.Stopped = log, recs, log.revision, max(calls, 0), stopped
	return st, nil
}

// Save saves the state of the session id, appending a step record to its
// file or writing it whole, if the file is at st.Revision (none is at 0);
// otherwise it fails with ErrSessionChanged.
func (s FileStore) Save(ctx context.Context, id string, st *State) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	path, err := s.path(id)
	if err != nil {
		return err
	}
	if err := checkRevision(path, id, st.Revision, st.log); err != nil {
		return err
	}
	if l := st.log; l != nil && l.path == path {
		if done, err := appendStep(l, st); done {
			return err
		}
	}
	return s.saveWhole(path, id, st)
}

// appendStep appends to l's file the record of st, if that is how st is
// best saved; it returns false if st should be saved whole instead.
func appendStep(l *fileLog, st *State) (bool, error) {
	keep := 0
	for keep < len(l.messages) && keep < len(st.Messages) && sameMessage(l.messages[keep], st.Messages[keep]) {
		keep++
	}
	if keep < len(l.messages) || l.end != l.info.Size() {
		return false, nil
	}
	if cur, err := os.Stat(l.path); err != nil || !l.unchanged(cur) {
		return false, nil
	}
	rec, err := st.form(keep)
	if err != nil {
		return true, err
	}
	rec.Revision = st.Revision + 1
	line, err := json.Marshal(rec)
	if err != nil {
		return true, fmt.Errorf("converse: save session: %w", err)
	}
	line = append(line, '\n')
	waste, last := l.waste+l.last, int64(len(line)-len(rec.Messages))
	if 2*waste > l.end+int64(len(line)) {
		return false, nil // compact
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return true, fmt.Errorf("converse: save session: %w", err)
	}
	defer f.Close()
	if cur, err := f.Stat(); err != nil || !l.unchanged(cur) {
		return false, nil
	}
	if _, err := f.Write(line); err != nil {
		return true, fmt.Errorf("converse: save session: %w", err)
	}
	if err := f.Sync(); err != nil {
		return true, fmt.Errorf("converse: save session: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		return true, fmt.Errorf("converse: save session: %w", err)
	}
	st.Revision = rec.Revision
	st.log = &fileLog{path: l.path, info: info, end: info.Size(), messages: st.Messages, waste: waste, last: last, revision: st.Revision}
	return true, nil
}

// sameMessage reports whether a and b are the same message of a history:
// a conversation replaces a message it changes, never edits it in place.
func sameMessage(a, b types.Message) bool {
	return a.Role == b.Role && len(a.Content) == len(b.Content) && (len(a.Content) == 0 || &a.Content[0] == &b.Content[0])
}

// saveWhole writes st as the session's file, atomically, and removes the
// temporary files of saves that a crash cut off.
func (s FileStore) saveWhole(path, id string, st *State) (err error) {
	j, err := st.form(0)
	if err != nil {
		return err
	}
	rev := st.Revision + 1
	j.Revision = rev
	b, err := json.Marshal(stateJSON{Version: StateVersion, ModelID: st.ModelID, snapshotJSON: j.snapshotJSON})
	if err != nil {
		return fmt.Errorf("converse: save session: %w", err)
	}
	if s.Dir != "" {
		if err := os.MkdirAll(s.Dir, 0o700); err != nil {
			return fmt.Errorf("converse: save session: %w", err)
		}
	}
	s.removeTemporary(id)
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
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("converse: save session: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("converse: save session: %w", err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("converse: save session: %w", err)
	}
	if err = syncDir(filepath.Dir(path)); err != nil {
		return err
	}
	st.Revision = rev
	st.log = &fileLog{path: path, info: info, end: info.Size(), messages: st.Messages, last: info.Size() - int64(len(j.Messages)), revision: rev}
	return nil
}

// removeTemporary removes the temporary files of the session id's saves
// (.ID.tmp- and the digits os.CreateTemp adds): saves of a session do not
// overlap, so any there is left by a crash.
func (s FileStore) removeTemporary(id string) {
	dir := s.Dir
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := "." + id + ".tmp-"
	for _, e := range entries {
		if n, ok := strings.CutPrefix(e.Name(), prefix); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// hold takes the session id for a Send or Resume of a conversation at
// revision rev, whose file was last as l saw it (nil: never seen), until
// release is called.
func (s FileStore) hold(id string, rev int64, l *fileLog) (release func(), err error) {
	path, err := s.path(id)
	if err != nil {
		return nil, err
	}
	release, pid, err := lockFile(filepath.Join(filepath.Dir(path), "."+id+".lock"))
	switch {
	case errors.Is(err, ErrSessionLocked) && pid > 0:
		return nil, fmt.Errorf("converse: %w: %q is held by process %d", err, id, pid)
	case errors.Is(err, ErrSessionLocked):
		return nil, fmt.Errorf("converse: %w: %q is held by another process", err, id)
	case errors.Is(err, fs.ErrNotExist):
		return func() {}, nil // no directory yet: nothing to hold, and the first save makes it
	case err != nil:
		return nil, fmt.Errorf("converse: session %q: %w", id, err)
	}
	if err := checkRevision(path, id, rev, l); err != nil {
		release()
		return nil, err
	}
	s.removeTemporary(id)
	return release, nil
}

// checkRevision fails with ErrSessionChanged unless the session's file at
// path is at revision rev (0: no file): as l saw it, or read again.
func checkRevision(path, id string, rev int64, l *fileLog) error {
	cur := int64(0)
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("converse: session %q: %w", id, err)
	case l != nil && l.path == path && l.unchanged(info):
		cur = l.revision
	default:
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("converse: session %q: %w", id, err)
		}
		st, err := readLog(b)
		if err != nil {
			return fmt.Errorf("converse: session %s: %w", path, err)
		}
		cur = st.Revision
	}
	if cur != rev {
		return fmt.Errorf("converse: %w: %q was saved by another conversation since this one last saved or was restored from it; Load and Restore it again", ErrSessionChanged, id)
	}
	return nil
}

// sessionHolder is a Store whose sessions a Send or Resume holds: FileStore
// and the stores that embed it.
type sessionHolder interface {
	hold(id string, rev int64, l *fileLog) (func(), error)
}

// holdSession rejects a Session without a Store or an ID, and holds the
// session of a FileStore, before anything is sent or saved.
func (c *Conversation) holdSession() (release func(), err error) {
	s := c.opts.Session
	if s == nil {
		return func() {}, nil
	}
	if s.Store == nil || s.ID == "" {
		return nil, errors.New("converse: Options.Session needs a Store and an ID")
	}
	h, ok := s.Store.(sessionHolder)
	if !ok {
		return func() {}, nil
	}
	c.mu.Lock()
	rev, l := c.revision, c.log
	c.mu.Unlock()
	return h.hold(s.ID, rev, l)
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
