//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package filestore

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/tooluse/bedrock/converse"
)

// lockFile takes an exclusive flock(2) on the file at path, made if need
// be, and writes this process's id in it. If another holds it, the error
// is converse.ErrSessionLocked and pid the holder's, when it wrote it.
// release removes the file before it unlocks it, so that lock files do not
// pile up beside the sessions.
func lockFile(path string) (release func(), pid int, err error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, 0, err
		}
		release, pid, err := lockOpened(f, path)
		if !errors.Is(err, errRemoved) {
			return release, pid, err
		}
	}
}

// errRemoved is lockOpened's error for a file its holder removed after f
// was opened: a lock on it is no lock, and the file now at path is to be
// opened again.
var errRemoved = errors.New("lock file removed")

// lockOpened takes the lock of f, opened at path, as lockFile does, and
// closes f if it fails.
func lockOpened(f *os.File, path string) (release func(), pid int, err error) {
	err = flock(f)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
		return nil, pid, converse.ErrSessionLocked
	}
	if err == nil && !isAt(f, path) {
		err = errRemoved
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		f.Truncate(0) // so that no one reads a process id that no longer holds it
		if isAt(f, path) {
			os.Remove(path) // while locked: not a file another made after ours was removed
		}
		f.Close() // releases the lock
	}, 0, nil
}

// flock takes an exclusive lock on f without waiting.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// isAt reports whether f is the file at path.
func isAt(f *os.File, path string) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	at, err := os.Stat(path)
	return err == nil && os.SameFile(held, at)
}
