package converse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/tools"
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

// TestBadSessionIDIsOneError: a session ID a FileStore cannot hold fails
// Send and Resume before any model call, with one prefix.
func TestBadSessionIDIsOneError(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("never")))
	for _, id := range []string{"../escape", "a/b", "."} {
		t.Run(id, func(t *testing.T) {
			c := converse.New(client, claude, nil, func(o *converse.Options) {
				o.Session = &converse.Session{Store: filestore.Store{Dir: t.TempDir()}, ID: id}
			})
			_, err := c.Send(context.Background(), "hi")
			assert.EqualError(t, err, fmt.Sprintf("filestore: session id %q is not a plain file name", id))
			_, err = c.Resume(context.Background())
			assert.EqualError(t, err, fmt.Sprintf("filestore: session id %q is not a plain file name", id))
		})
	}
	assert.Empty(t, srv.Requests())
}

// echoTool returns its input text, size bytes of it, so that a step's tool
// I/O has a known size; it waits for gate first, if not nil.
func echoTool(t testing.TB, gate <-chan struct{}) *tools.Registry {
	t.Helper()
	echo, err := tools.New("echo", "Echoes.", func(ctx context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		if gate != nil {
			<-gate
		}
		return in.Text, nil
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(echo)
	require.NoError(t, err)
	return reg
}

// echoRounds is a script of rounds tool rounds, each an echo of size bytes,
// then a final answer.
func echoRounds(rounds, size int) bedrocktest.Handler {
	var replies []*bedrocktest.Reply
	for i := range rounds {
		replies = append(replies, bedrocktest.ToolUse("", bedrocktest.Call{ID: fmt.Sprintf("e%d", i), Name: "echo",
			Input: map[string]any{"text": strings.Repeat("x", size)}}))
	}
	return bedrocktest.Script(append(replies, bedrocktest.Text("done"))...)
}

// TestSessionHeldByOneSend: while a Send of a session runs, another Send or
// Resume of it, from another Conversation, fails at once with ErrSessionLocked
// naming the process. Once it is done, a conversation that did not see its
// saves fails with ErrSessionChanged instead of saving over them. One restored
// from the store goes on.
func TestSessionHeldByOneSend(t *testing.T) {
	s := sendInTool(t)
	gate, reg, client, store, first, done := s.gate, s.reg, s.client, s.store, s.first, s.done

	second := converse.New(client, claude, reg, func(o *converse.Options) { o.Session = &converse.Session{Store: store, ID: "s"} })
	_, err := second.Send(context.Background(), "second")
	require.ErrorIs(t, err, converse.ErrSessionLocked)
	assert.EqualError(t, err, fmt.Sprintf(`filestore: session in use: "s" is held by process %d`, os.Getpid()))
	st, err := store.Load(context.Background(), "s")
	require.NoError(t, err)
	restored, err := converse.Restore(client, reg, st, func(o *converse.Options) { o.Session = &converse.Session{Store: store, ID: "s"} })
	require.NoError(t, err)
	_, err = restored.Resume(context.Background())
	require.ErrorIs(t, err, converse.ErrSessionLocked, "the interrupted-looking state of a running Send is not resumed")

	close(gate)
	require.NoError(t, <-done)
	for name, c := range map[string]*converse.Conversation{"new": second, "restored while it ran": restored} {
		_, err = c.Send(context.Background(), "second")
		require.ErrorIs(t, err, converse.ErrSessionChanged, name)
		assert.EqualError(t, err, `filestore: session changed: "s" was saved by another conversation since this one last saved or was restored from it; Load and Restore it again`)
	}
	st, err = store.Load(context.Background(), "s")
	require.NoError(t, err)
	assert.Equal(t, first.History(), st.Messages, "nothing saved over the first conversation")
}

// TestSessionLogAppends: a FileStore session grows by each step's bytes, not
// by the history at each step. Every save of a 30-round conversation with 2 KB
// of tool I/O a round appends to the same file less than the step's I/O and 1
// KB. The file reads back as the conversation's state.
func TestSessionLogAppends(t *testing.T) {
	const rounds, size = 30, 2000
	_, client := serve(t, echoRounds(rounds, size))
	store := filestore.Store{Dir: t.TempDir()}
	path := filepath.Join(store.Dir, "s")
	var sizes []int64
	var files []os.FileInfo
	c := converse.New(client, claude, echoTool(t, nil), func(o *converse.Options) {
		o.Session, o.MaxTurns = &converse.Session{Store: store, ID: "s"}, rounds+1
		o.OnEvent = func(ev converse.Event) {
			if _, ok := ev.(converse.StateSaved); ok {
				info, err := os.Stat(path)
				require.NoError(t, err)
				sizes, files = append(sizes, info.Size()), append(files, info)
			}
		}
	})
	_, err := c.Send(context.Background(), "go")
	require.NoError(t, err)
	require.Len(t, sizes, 2*rounds+2, "the prompt, two saves a round (the calls started, their results), the answer")
	for i := 1; i < len(sizes); i++ {
		assert.Less(t, sizes[i]-sizes[i-1], int64(size+1000), "save %d", i)
		assert.True(t, os.SameFile(files[0], files[i]), "save %d appended to the file", i)
	}
	whole, err := json.Marshal(c.State())
	require.NoError(t, err)
	assert.Less(t, sizes[len(sizes)-1], 2*int64(len(whole)), "the log is less than twice the state")
	st, err := store.Load(context.Background(), "s")
	require.NoError(t, err)
	assert.Equal(t, c.History(), st.Messages)
	assert.Equal(t, c.State().Usage, st.Usage)
}

// TestSessionLogReads: a session file is read whatever its form. It may be the
// whole State of version 1 as FileStore wrote it before
// (testdata/state-v1.json). It may be a log whose last record a crash tore,
// which is ignored. The next save of such a file writes it whole.
func TestSessionLogReads(t *testing.T) {
	golden, err := os.ReadFile("testdata/state-v1.json")
	require.NoError(t, err)
	var want converse.State
	require.NoError(t, json.Unmarshal(golden, &want))
	store := filestore.Store{Dir: t.TempDir()}
	require.NoError(t, os.WriteFile(filepath.Join(store.Dir, "old"), golden, 0o600))
	st, err := store.Load(context.Background(), "old")
	require.NoError(t, err)
	assert.Equal(t, want.Messages, st.Messages)
	assert.Equal(t, want.Pending, st.Pending)
	wantJSON, err := json.Marshal(&want)
	require.NoError(t, err)
	gotJSON, err := json.Marshal(st)
	require.NoError(t, err)
	assert.JSONEq(t, string(wantJSON), string(gotJSON))

	_, client := serve(t, echoRounds(2, 10))
	c := converse.New(client, claude, echoTool(t, nil), func(o *converse.Options) { o.Session = &converse.Session{Store: store, ID: "torn"} })
	_, err = c.Send(context.Background(), "go")
	require.NoError(t, err)
	path := filepath.Join(store.Dir, "torn")
	before, err := store.Load(context.Background(), "torn")
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"keep":4,"messages":[{"content":[{"te`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	after, err := store.Load(context.Background(), "torn")
	require.NoError(t, err)
	assert.Equal(t, before.Messages, after.Messages, "the torn record is ignored")
	require.NoError(t, store.Save(context.Background(), "torn", after))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(b), "\n"), "written whole:\n%s", b)
	again, err := store.Load(context.Background(), "torn")
	require.NoError(t, err)
	assert.Equal(t, before.Messages, again.Messages)
}

// TestSessionLogRewrites: a step that drops saved messages (a prompt no
// model call answered, replaced by the next Send) writes the file whole,
// and it reads back as the conversation.
func TestSessionLogRewrites(t *testing.T) {
	calls := 0
	_, client := serve(t, bedrocktest.HandlerFunc(func(context.Context, *bedrocktest.Request) (*bedrocktest.Reply, error) {
		calls++
		if calls == 1 {
			return nil, bedrocktest.Validation("not this time")
		}
		return bedrocktest.Text("answered"), nil
	}))
	store := filestore.Store{Dir: t.TempDir()}
	c := converse.New(bedrockruntime.New(client.Options(), noRetries), claude, nil, func(o *converse.Options) { o.Session = &converse.Session{Store: store, ID: "s"} })
	_, err := c.Send(context.Background(), "unanswered")
	require.Error(t, err)
	_, err = c.Send(context.Background(), "replaced")
	require.NoError(t, err)
	st, err := store.Load(context.Background(), "s")
	require.NoError(t, err)
	assert.Equal(t, c.History(), st.Messages)
	require.Len(t, st.Messages, 2)
	b, err := os.ReadFile(filepath.Join(store.Dir, "s"))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "unanswered")
}

// TestStaleTemporaryFiles: the temporary files of saves a crash cut off are
// removed when the session is next held; other sessions' are left alone.
// The lock file of the Send is gone when it returns.
func TestStaleTemporaryFiles(t *testing.T) {
	store := filestore.Store{Dir: t.TempDir()}
	stale := []string{".s.tmp-123", ".s.tmp-4567"}
	kept := []string{".s2.tmp-1", ".s.tmp-x.tmp-2", "s"}
	for _, name := range append(stale[:len(stale):len(stale)], kept[:2]...) {
		require.NoError(t, os.WriteFile(filepath.Join(store.Dir, name), []byte("{"), 0o600))
	}
	_, client := serve(t, bedrocktest.Script(bedrocktest.Text("hello")))
	_, err := converse.New(client, claude, nil, func(o *converse.Options) { o.Session = &converse.Session{Store: store, ID: "s"} }).Send(context.Background(), "hi")
	require.NoError(t, err)
	for _, name := range stale {
		assert.NoFileExists(t, filepath.Join(store.Dir, name))
	}
	for _, name := range kept {
		assert.FileExists(t, filepath.Join(store.Dir, name))
	}
	assert.NoFileExists(t, filepath.Join(store.Dir, ".s.lock"))
}

// TestSessionLostLock: a Send whose lock was lost while it ran (its lock file
// removed, so that another took the session and saved it) is caught by its
// revision at its next save. It fails with ErrSessionChanged instead of
// writing over the other's steps, which the file keeps.
func TestSessionLostLock(t *testing.T) {
	s := sendInTool(t)
	gate, reg, store, done := s.gate, s.reg, s.store, s.done
	require.NoError(t, os.Remove(filepath.Join(store.Dir, ".s.lock")))

	st, err := store.Load(context.Background(), "s")
	require.NoError(t, err)
	_, other := serve(t, bedrocktest.Script(bedrocktest.Text("taken over")))
	second, err := converse.Restore(other, reg, st, func(o *converse.Options) { o.Session = &converse.Session{Store: store, ID: "s"} })
	require.NoError(t, err)
	res, err := second.Resume(context.Background())
	require.NoError(t, err)
	require.Equal(t, "taken over", res.Text)

	close(gate)
	err = <-done
	require.ErrorIs(t, err, converse.ErrSessionChanged)
	st, err = store.Load(context.Background(), "s")
	require.NoError(t, err)
	assert.Equal(t, second.History(), st.Messages, "nothing saved over the second conversation")
	assert.Equal(t, second.State().Revision, st.Revision)
}

// heldSend is a Send of the FileStore session "s" held in its tool call
// until gate is closed; done gets its error.
type heldSend struct {
	gate   chan struct{}
	reg    *tools.Registry
	client *bedrockruntime.Client
	store  filestore.Store
	first  *converse.Conversation
	done   chan error
}

// sendInTool starts a heldSend and returns once its tool call runs.
func sendInTool(t *testing.T) heldSend {
	t.Helper()
	h := heldSend{gate: make(chan struct{}), store: filestore.Store{Dir: t.TempDir()}, done: make(chan error)}
	h.reg = echoTool(t, h.gate)
	_, h.client = serve(t, echoRounds(1, 10))
	running := make(chan struct{})
	h.first = converse.New(h.client, claude, h.reg, func(o *converse.Options) {
		o.Session = &converse.Session{Store: h.store, ID: "s"}
		o.OnEvent = func(ev converse.Event) {
			if _, ok := ev.(converse.ToolStart); ok {
				close(running)
			}
		}
	})
	go func() {
		_, err := h.first.Send(context.Background(), "first")
		h.done <- err
	}()
	<-running
	return h
}
