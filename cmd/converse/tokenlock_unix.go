//go:build unix

package main

import (
	"errors"
	"os"
	"syscall"
)

// lockTokens takes an exclusive flock(2) on the lock file beside the token
// file at path, made if need be, waiting while another converse process
// holds it, and returns its release. The lock file stays, so that two
// processes never lock two files of one name.
func lockTokens(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil // closing releases the lock
}
