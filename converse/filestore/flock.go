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
func lockFile(path string) (release func(), pid int, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, 0, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
		return nil, pid, converse.ErrSessionLocked
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
		f.Close()     // releases the lock
	}, 0, nil
}
