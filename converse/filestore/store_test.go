package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/filestore"
)

// prompt is a state of one user message, text.
func prompt(text string) *converse.State {
	return &converse.State{ModelID: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", Messages: []types.Message{
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: text}}},
	}}
}

// TestConcurrentSessions: writers of different sessions at once never see
// each other's state, nor a torn one. Each save is on top of the revision
// before (n) and makes the next. Files are private, and no temporary file
// is left.
func TestConcurrentSessions(t *testing.T) {
	store := filestore.Store{Dir: t.TempDir()}
	const sessions, saves = 8, 20
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Go(func() {
			id := fmt.Sprintf("session-%d.json", s)
			for n := range saves {
				st := prompt(id + fmt.Sprint(n))
				st.Revision = int64(n)
				assert.NoError(t, store.Save(context.Background(), id, st))
				assert.Equal(t, int64(n+1), st.Revision)
				st, err := store.Load(context.Background(), id)
				if assert.NoError(t, err) {
					assert.Equal(t, prompt(id+fmt.Sprint(n)).Messages, st.Messages)
					assert.Equal(t, int64(n+1), st.Revision)
				}
			}
		})
	}
	wg.Wait()
	entries, err := os.ReadDir(store.Dir)
	require.NoError(t, err)
	assert.Len(t, entries, sessions, "one file per session, no temporary files")
	for _, e := range entries {
		info, err := e.Info()
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o600), info.Mode().Perm(), e.Name())
	}
}

func TestIDs(t *testing.T) {
	store := filestore.Store{Dir: t.TempDir()}
	_, err := store.Load(context.Background(), "missing")
	require.ErrorIs(t, err, fs.ErrNotExist)
	for _, id := range []string{"", ".", "..", ".hidden", "a/b", `a\b`, "a\x00b"} {
		require.Error(t, store.Save(context.Background(), id, prompt("x")), "%q", id)
	}
}

// TestOtherVersion: a session file of another version of the state's form
// is refused as one, before its messages are read.
func TestOtherVersion(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(dir+"/s", []byte(`{"version": 9, "messages": "later"}`), 0o600))
	_, err := filestore.Store{Dir: dir}.Load(context.Background(), "s")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "state version 9, this package reads version 1")
}

// TestNotSessionFile: a file that is not a JSON object, or one without a
// state's version, is refused with ErrNotSessionFile; a state of another
// version is not.
func TestNotSessionFile(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]bool{
		"notes\n":                          true,
		"":                                 true,
		`[1, 2]`:                           true,
		`{"name": "x"}`:                    true,
		`{"version": 9, "messages": []}`:   false,
		`{"version": 1, "messages": "no"}`: false,
	} {
		require.NoError(t, os.WriteFile(dir+"/s", []byte(content), 0o600))
		_, err := filestore.Store{Dir: dir}.Load(context.Background(), "s")
		require.Error(t, err, content)
		assert.Equal(t, want, errors.Is(err, filestore.ErrNotSessionFile), "%q: %v", content, err)
	}
}

// TestRemovedDuringTheRun: a session file removed after a conversation
// loaded or saved it fails the next Save, and Hold, with ErrSessionChanged
// saying it was removed, not that another conversation wrote it.
func TestRemovedDuringTheRun(t *testing.T) {
	store := filestore.Store{Dir: t.TempDir()}
	ctx := context.Background()
	st := prompt("hello")
	require.NoError(t, store.Save(ctx, "s", st))
	require.NoError(t, os.Remove(store.Dir+"/s"))

	_, err := store.Hold(ctx, "s", st)
	require.ErrorIs(t, err, converse.ErrSessionChanged)
	assert.EqualError(t, err, "filestore: session changed: session file "+store.Dir+"/s was removed before the run (file does not exist)")
	err = store.Save(ctx, "s", st)
	require.ErrorIs(t, err, converse.ErrSessionChanged)
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.EqualError(t, err, "filestore: session changed: session file "+store.Dir+"/s was removed during the run (file does not exist)")
	_, err = os.Stat(store.Dir + "/s")
	assert.ErrorIs(t, err, fs.ErrNotExist, "the failed save wrote nothing")
}
