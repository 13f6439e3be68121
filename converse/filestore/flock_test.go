//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package filestore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
)

// TestLockFileRemoved: a release removes its lock file. A lock taken on a
// file its holder removed after it was opened is no lock, and is not kept.
// A release leaves alone the lock file another made after its own was
// removed. There is one holder at a time throughout.
func TestLockFileRemoved(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".s.lock")
	first, _, err := lockFile(path)
	require.NoError(t, err)
	stale, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	first()
	assert.NoFileExists(t, path, "released")

	second, _, err := lockFile(path)
	require.NoError(t, err)
	_, _, err = lockOpened(stale, path)
	require.ErrorIs(t, err, errRemoved, "the lock of a file opened before its holder removed it")

	require.NoError(t, os.Remove(path)) // as if by hand: second lost its lock
	third, _, err := lockFile(path)
	require.NoError(t, err)
	second()
	assert.FileExists(t, path, "second's release kept third's lock file")
	_, _, err = lockFile(path)
	require.ErrorIs(t, err, converse.ErrSessionLocked, "third holds it")
	third()
	assert.NoFileExists(t, path)
}
