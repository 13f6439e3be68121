// Package filestore is a converse.Store that keeps each session in a file
// of a directory: a log, so that a step costs what it adds, not the whole
// history.
package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/internal/message"
)

// Store is a converse.Store keeping each session in a file of Dir named by
// its id, readable by its owner only (0600). An id must be a plain file
// name.
//
// The file is a log. Its first line is the JSON form of a converse.State
// with the session's revision added ("revision": N). Each further line is
// a step record, {"keep": K, "messages": [...], "openTurn": {...},
// "usage": {...}, ..., "revision": N}. The state after the step is the
// first K messages of the state before, then the record's messages. The
// record's other fields take the place of the state's; an absent open
// turn is none. The turn records of the messages from K-1 on are replaced
// by the record's "turns". The revision is the record's: one more than
// the line before if absent, 1 for a first line without one. See
// testdata/session-v1.txt.
//
// A Save appends one record and syncs the file once. It writes the whole
// state instead for a new file, or a history that lost messages (trimmed,
// or an unanswered prompt replaced). It does so too for a file it did not
// write or read last, or one whose superseded records make up half of it.
// The whole state goes to a temporary file in Dir, synced, renamed over
// the session's file, and Dir is synced. A crash
// during a Save leaves the old state or the new one: a torn last record is
// ignored. A file of the whole State alone, as written before logs, is a
// log of no records.
//
// Store is a converse.Holder. A Send, Resume or Stop of a conversation
// holds its session. It takes an exclusive lock (flock(2)) on the file
// .ID.lock beside the session's, removed when it is done. If another
// holds it, it fails at once with converse.ErrSessionLocked, naming the
// process. If the file is not at the conversation's revision, it fails
// with converse.ErrSessionChanged. Each Save checks the revision again,
// so that a writer that lost its lock (its lock file removed, say) is
// caught by it too. Where
// flock is not available (Windows, Plan 9, Solaris), no lock is taken; the
// revision checks still are, though a check and its write are then not
// atomic. Stale temporary files of a crashed Save (.ID.tmp-N) are removed
// when the session is next held or saved whole. Saves of different
// sessions may run concurrently; saves of one session must not.
type Store struct {
	Dir string
}

// ErrNotSessionFile is the error of Load for a file that is not a session
// file at all: not a JSON object, or one without a state's version, such
// as a file named by mistake.
var ErrNotSessionFile = errors.New("not a session file")

// fileLog is what a Store knows of a session's file after reading or
// writing it, for appending the next step: a State's StoreData. It is
// never changed once made.
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

// logOf returns the fileLog of st for the file at path, or nil.
func logOf(st *converse.State, path string) *fileLog {
	l, ok := st.StoreData.(*fileLog)
	if !ok || l.path != path {
		return nil
	}
	return l
}

// path is the session's file. An id must be a plain file name: no
// separator, not "." or "..", and no leading dot (temporary and lock files
// have one).
func (s Store) path(id string) (string, error) {
	if id == "" || strings.ContainsAny(id, `/\`+"\x00") || strings.HasPrefix(id, ".") || filepath.Base(id) != id {
		return "", fmt.Errorf("filestore: session id %q is not a plain file name", id)
	}
	return filepath.Join(s.Dir, id), nil
}

// Load reads the state of the session id.
func (s Store) Load(ctx context.Context, id string) (*converse.State, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, err := s.path(id)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("filestore: load session: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("filestore: load session: %w", err)
	}
	b := make([]byte, info.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("filestore: load session: %w", err)
	}
	st, l, err := readLog(b)
	if err != nil {
		return nil, fmt.Errorf("filestore: load session %s: %w", path, err)
	}
	l.path, l.info = path, info
	st.StoreData = l
	return st, nil
}

// Save saves the state of the session id, appending a step record to its
// file or writing it whole, if the file is at st.Revision (none is at 0);
// otherwise it fails with converse.ErrSessionChanged.
func (s Store) Save(ctx context.Context, id string, st *converse.State) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	path, err := s.path(id)
	if err != nil {
		return err
	}
	l := logOf(st, path)
	if err := checkRevision(path, id, st.Revision, l, "during the run"); err != nil {
		return err
	}
	if l != nil {
		if done, err := appendStep(l, st); done {
			return err
		}
	}
	return s.saveWhole(path, id, st)
}

// appendStep appends to l's file the record of st, if that is how st is
// best saved; it returns false if st should be saved whole instead.
func appendStep(l *fileLog, st *converse.State) (bool, error) {
	keep := 0
	for keep < len(l.messages) && keep < len(st.Messages) && message.Same(l.messages[keep], st.Messages[keep]) {
		keep++
	}
	if keep < len(l.messages) || l.end != l.info.Size() {
		return false, nil
	}
	if cur, err := os.Stat(l.path); err != nil || !l.unchanged(cur) {
		return false, nil
	}
	line, last, err := encodeLine(st, keep, false, st.Revision+1)
	if err != nil {
		return true, err
	}
	waste := l.waste + l.last
	if 2*waste > l.end+int64(len(line)) {
		return false, nil // compact
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return true, removed(l.path, "during the run")
	}
	if err != nil {
		return true, fmt.Errorf("filestore: save session: %w", err)
	}
	defer f.Close()
	if cur, err := f.Stat(); err != nil || !l.unchanged(cur) {
		return false, nil
	}
	if _, err := f.Write(line); err != nil {
		return true, fmt.Errorf("filestore: save session: %w", err)
	}
	if err := f.Sync(); err != nil {
		return true, fmt.Errorf("filestore: save session: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		return true, fmt.Errorf("filestore: save session: %w", err)
	}
	st.Revision++
	st.StoreData = &fileLog{path: l.path, info: info, end: info.Size(), messages: st.Messages, waste: waste, last: last, revision: st.Revision}
	return true, nil
}

// saveWhole writes st as the session's file, atomically, and removes the
// temporary files of saves that a crash cut off.
func (s Store) saveWhole(path, id string, st *converse.State) (err error) {
	rev := st.Revision + 1
	line, last, err := encodeLine(st, 0, true, rev)
	if err != nil {
		return err
	}
	if s.Dir != "" {
		if err := os.MkdirAll(s.Dir, 0o700); err != nil {
			return fmt.Errorf("filestore: save session: %w", err)
		}
	}
	s.removeTemporary(id)
	f, err := os.CreateTemp(filepath.Dir(path), "."+id+".tmp-*") // 0600
	if err != nil {
		return fmt.Errorf("filestore: save session: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(line); err != nil {
		return fmt.Errorf("filestore: save session: %w", err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("filestore: save session: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("filestore: save session: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("filestore: save session: %w", err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("filestore: save session: %w", err)
	}
	if err = syncDir(filepath.Dir(path)); err != nil {
		return err
	}
	st.Revision = rev
	st.StoreData = &fileLog{path: path, info: info, end: info.Size(), messages: st.Messages, last: last, revision: rev}
	return nil
}

// removeTemporary removes the temporary files of the session id's saves
// (.ID.tmp- and the digits os.CreateTemp adds): saves of a session do not
// overlap, so any there is left by a crash.
func (s Store) removeTemporary(id string) {
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

// Hold takes the session id for a Send, Resume or Stop of a conversation
// whose state is st, until release is called. It locks the session's lock
// file and checks that the session is at st.Revision.
func (s Store) Hold(ctx context.Context, id string, st *converse.State) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, err := s.path(id)
	if err != nil {
		return nil, err
	}
	release, pid, err := lockFile(filepath.Join(filepath.Dir(path), "."+id+".lock"))
	switch {
	case errors.Is(err, converse.ErrSessionLocked) && pid > 0:
		return nil, fmt.Errorf("filestore: %w: %q is held by process %d", err, id, pid)
	case errors.Is(err, converse.ErrSessionLocked):
		return nil, fmt.Errorf("filestore: %w: %q is held by another process", err, id)
	case errors.Is(err, fs.ErrNotExist):
		return func() {}, nil // no directory yet: nothing to hold, and the first save makes it
	case err != nil:
		return nil, fmt.Errorf("filestore: session %q: %w", id, err)
	}
	if err := checkRevision(path, id, st.Revision, logOf(st, path), "before the run"); err != nil {
		release()
		return nil, err
	}
	s.removeTemporary(id)
	return release, nil
}

// checkRevision fails with converse.ErrSessionChanged unless the session's
// file at path is at revision rev (0: no file): as l saw it, or read again.
// A file removed since is said to be, when (during or before the run).
func checkRevision(path, id string, rev int64, l *fileLog, when string) error {
	cur := int64(0)
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && rev != 0:
		return removed(path, when)
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("filestore: session %q: %w", id, err)
	case l != nil && l.unchanged(info):
		cur = l.revision
	default:
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("filestore: session %q: %w", id, err)
		}
		_, read, err := readLog(b)
		if err != nil {
			return fmt.Errorf("filestore: session %s: %w", path, err)
		}
		cur = read.revision
	}
	if cur != rev {
		return fmt.Errorf("filestore: %w: %q was saved by another conversation since this one last saved or was restored from it; Load and Restore it again", converse.ErrSessionChanged, id)
	}
	return nil
}

// removed is the error of a session whose file at path was removed when
// (during or before the run): it matches converse.ErrSessionChanged, and
// fs.ErrNotExist so that a caller can say which.
func removed(path, when string) error {
	return fmt.Errorf("filestore: %w: session file %s was removed %s (%w)", converse.ErrSessionChanged, path, when, fs.ErrNotExist)
}

// syncDir makes a rename in dir durable. Windows cannot sync a directory;
// its renames are durable once they return.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("filestore: save session: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("filestore: save session: sync %s: %w", dir, err)
	}
	return nil
}
