package converse_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

func textState(words ...string) *converse.State {
	st := &converse.State{ModelID: claude}
	for i, w := range words {
		role := types.ConversationRoleUser
		if i%2 == 1 {
			role = types.ConversationRoleAssistant
		}
		st.Messages = append(st.Messages, types.Message{Role: role, Content: []types.ContentBlock{text(w)}})
	}
	return st
}

// TestFileStoreConcurrentSessions: writers of different sessions at once
// never see each other's state, nor a torn one; files are private and no
// temporary file is left.
func TestFileStoreConcurrentSessions(t *testing.T) {
	store := converse.FileStore{Dir: t.TempDir()}
	const sessions, saves = 8, 20
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Go(func() {
			id := fmt.Sprintf("session-%d.json", s)
			for n := range saves {
				assert.NoError(t, store.Save(context.Background(), id, textState(id, fmt.Sprint(n))))
				st, err := store.Load(context.Background(), id)
				if assert.NoError(t, err) {
					assert.Equal(t, textState(id, fmt.Sprint(n)).Messages, st.Messages)
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

func TestFileStoreIDs(t *testing.T) {
	store := converse.FileStore{Dir: t.TempDir()}
	_, err := store.Load(context.Background(), "missing")
	require.ErrorIs(t, err, fs.ErrNotExist)
	for _, id := range []string{"", ".", "..", ".hidden", "a/b", `a\b`, "a\x00b"} {
		require.Error(t, store.Save(context.Background(), id, textState("x")), "%q", id)
	}
}

// TestBadSessionIDIsOneError: a SessionID a FileStore cannot hold fails
// Send and Resume before any model call, with one prefix.
func TestBadSessionIDIsOneError(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("never")))
	for _, id := range []string{"../escape", "a/b", "."} {
		t.Run(id, func(t *testing.T) {
			c := converse.New(client, claude, nil, func(o *converse.Options) {
				o.Store, o.SessionID = converse.FileStore{Dir: t.TempDir()}, id
			})
			_, err := c.Send(context.Background(), "hi")
			assert.EqualError(t, err, fmt.Sprintf("converse: session id %q is not a plain file name", id))
			_, err = c.Resume(context.Background())
			assert.EqualError(t, err, fmt.Sprintf("converse: session id %q is not a plain file name", id))
		})
	}
	assert.Empty(t, srv.Requests())
}
