package converse_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/dynamostore"
	"github.com/tooluse/bedrock/converse/dynamostore/dynamotest"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/tools"
)

// The ways a survival plan stops the first process's loop.
const (
	killNone   = "none"   // it runs to its end (a pause ends it too)
	killCancel = "cancel" // the context is cancelled at the killAt-th event
	killFault  = "fault"  // the killAt-th model call fails with a throttle or a 5xx
	killStop   = "stop"   // the bedrocktest server is closed while the call stopOn runs
	killCrash  = "crash"  // the store takes no save after the killAt-th, as if the process died
)

// plannedCall is a tool call of a survival plan. A "send" call needs
// approval: the in-process approver answers verdict, and a call it pauses
// is decided later, on Resume.
type plannedCall struct {
	id, tool       string
	verdict, later converse.Verdict
}

// denied reports whether the call is denied, now or on Resume.
func (p plannedCall) denied() bool {
	return p.verdict == converse.Denied || p.verdict == converse.Paused && p.later == converse.Denied
}

// survivalPlan is a random conversation and the way it is stopped.
type survivalPlan struct {
	rounds  [][]plannedCall
	kill    string
	killAt  int
	fault   func() *bedrocktest.Error
	panicOn string // a step call that panics, if any
	stopOn  string // a step call during which the server stops, for killStop
}

func newSurvivalPlan(seed uint64) survivalPlan {
	r := rand.New(rand.NewPCG(seed, 12))
	p := survivalPlan{kill: []string{killNone, killCancel, killFault, killStop, killCrash}[r.IntN(5)]}
	var steps []string
	for i := range 1 + r.IntN(4) {
		var round []plannedCall
		for j := range 1 + r.IntN(3) {
			c := plannedCall{id: fmt.Sprintf("r%dc%d", i+1, j+1), tool: "step"}
			if r.IntN(3) == 0 {
				c.tool = "send"
				c.verdict = []converse.Verdict{converse.Approved, converse.Denied, converse.Paused}[r.IntN(3)]
				c.later = []converse.Verdict{converse.Approved, converse.Denied}[r.IntN(2)]
			} else {
				steps = append(steps, c.id)
			}
			round = append(round, c)
		}
		p.rounds = append(p.rounds, round)
	}
	if len(steps) > 0 && r.IntN(3) == 0 {
		p.panicOn = steps[r.IntN(len(steps))]
	}
	switch p.kill {
	case killCancel:
		p.killAt = 1 + r.IntN(4+8*len(p.rounds)) // past the end at times: then nothing is cancelled
	case killFault:
		p.killAt = 1 + r.IntN(len(p.rounds)+1)
		p.fault = []func() *bedrocktest.Error{bedrocktest.Throttling, bedrocktest.InternalServer, bedrocktest.ServiceUnavailable}[r.IntN(3)]
	case killStop:
		if len(steps) == 0 {
			p.kill = killNone
			break
		}
		p.stopOn = steps[r.IntN(len(steps))]
	case killCrash:
		p.killAt = 1 + r.IntN(3*len(p.rounds)+1)
	}
	return p
}

func (p survivalPlan) call(id string) plannedCall {
	for _, round := range p.rounds {
		for _, c := range round {
			if c.id == id {
				return c
			}
		}
	}
	return plannedCall{}
}

// replies are the model's turns: a tool_use turn per round, then "done".
func (p survivalPlan) replies() []*bedrocktest.Reply {
	var out []*bedrocktest.Reply
	for i, round := range p.rounds {
		calls := make([]bedrocktest.Call, len(round))
		for j, c := range round {
			calls[j] = bedrocktest.Call{ID: c.id, Name: c.tool, Input: map[string]any{"n": j}}
		}
		out = append(out, bedrocktest.ToolUse(fmt.Sprintf("round %d", i+1), calls...))
	}
	return append(out, bedrocktest.Text("done"))
}

// byHistory answers each model call with the reply for the number of assistant
// turns in its request. So a fresh server, or the same one asked again after a
// failure, goes on where the conversation is.
func byHistory(replies []*bedrocktest.Reply) bedrocktest.Handler {
	return bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		n := 0
		for _, m := range req.Messages {
			if m.Role == types.ConversationRoleAssistant {
				n++
			}
		}
		if n >= len(replies) {
			return nil, bedrocktest.Validation(fmt.Sprintf("no reply after %d turns", n))
		}
		return replies[n], nil
	})
}

// recorder keeps a copy of every state a store saved, as read back. It makes
// the store take no save after the crashAfter-th (if set), as if the process
// had died. The session keeps the last state saved.
type recorder struct {
	crashAfter int

	mu    sync.Mutex
	saves int
	saved [][]byte
}

var errCrashed = errors.New("the process died")

func (r *recorder) save(ctx context.Context, store converse.Store, id string, st *converse.State) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.saves++
	if r.crashAfter > 0 && r.saves > r.crashAfter {
		return errCrashed
	}
	if err := store.Save(ctx, id, st); err != nil {
		return err
	}
	saved, err := store.Load(ctx, id)
	if err != nil {
		return err
	}
	b, err := json.Marshal(saved)
	if err != nil {
		return err
	}
	r.saved = append(r.saved, b)
	return nil
}

// recordingStore is a Store that saves through its recorder.
type recordingStore struct {
	converse.Store
	*recorder
}

func (s recordingStore) Save(ctx context.Context, id string, st *converse.State) error {
	return s.save(ctx, s.Store, id, st)
}

// recordingFileStore is recordingStore for a filestore.Store, embedded, so
// that a Send still holds its session as it does with the Store alone.
type recordingFileStore struct {
	filestore.Store
	*recorder
}

func (s recordingFileStore) Save(ctx context.Context, id string, st *converse.State) error {
	return s.save(ctx, s.Store, id, st)
}

// recordSaves wraps store in a recorder that crashes after crashAfter saves
// (never if 0).
func recordSaves(store converse.Store, crashAfter int) (converse.Store, *recorder) {
	r := &recorder{crashAfter: crashAfter}
	if fs, ok := store.(filestore.Store); ok {
		return recordingFileStore{fs, r}, r
	}
	return recordingStore{store, r}, r
}

// survivalTools are "step", which may panic or stop the server, and "send",
// which needs approval; both count their runs by toolUseId.
func survivalTools(t *testing.T, p survivalPlan, runs *runCounter, stop func()) *tools.Registry {
	t.Helper()
	step, err := tools.New("step", "Does a step.", func(ctx context.Context, in stepIn) (int, error) {
		id := tools.CallID(ctx)
		runs.add(id)
		if id == p.stopOn {
			stop()
		}
		if id == p.panicOn {
			panic("step exploded")
		}
		return in.N, nil
	})
	require.NoError(t, err)
	send, err := tools.New("send", "Sends a message; needs approval.", func(ctx context.Context, in stepIn) (string, error) {
		runs.add(tools.CallID(ctx))
		return "sent", nil
	}, func(o *tools.Options) { o.RequireApproval = true })
	require.NoError(t, err)
	reg, err := tools.NewRegistry(step, send)
	require.NoError(t, err)
	return reg
}

// TestSurvivalProperty runs many seeded random conversations. They have random
// rounds and calls per round, some calls needing approval, approved, denied or
// paused by an in-process approver. Each runs with a filestore.Store and with
// a dynamostore.Store on dynalite (skipped without it). Each is stopped at a
// random point. A context is cancelled at a random event, or a throttle or a
// 5xx comes at a random turn. Or the server is closed during a tool round, or
// the store dies at a random save. A tool panics in some. Every state ever
// saved must then load, restore and make a request bedrocktest accepts. The
// last one must resume to the final answer, in a fresh Conversation of a fresh
// Store against a fresh server. Each call runs at most once. It runs exactly
// once unless it was denied, or cut off by the cancellation or the crash, and
// then it is answered with an error result the model saw.
func TestSurvivalProperty(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 15
	}
	for _, tt := range []struct {
		name string
		// sessions returns a function that opens the sessions of a seed,
		// apart from every other seed's, afresh each time, as another
		// process would.
		sessions func(t *testing.T) func(seed uint64) converse.Store
	}{
		{name: "FileStore", sessions: func(t *testing.T) func(uint64) converse.Store {
			dir := t.TempDir()
			return func(seed uint64) converse.Store {
				return filestore.Store{Dir: filepath.Join(dir, fmt.Sprint(seed))}
			}
		}},
		{name: "dynamostore", sessions: func(t *testing.T) func(uint64) converse.Store {
			db := dynamotest.DynamoDB(t)
			table := dynamotest.Table(t, db, "id", "")
			return func(seed uint64) converse.Store {
				return dynamostore.New(db, table, func(o *dynamostore.Options) { o.KeyPrefix = fmt.Sprintf("seed %d/", seed) })
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			open := tt.sessions(t)
			for seed := range uint64(seeds) {
				p := newSurvivalPlan(seed)
				t.Run(fmt.Sprintf("seed %d %s", seed, p.kill), func(t *testing.T) {
					checkSurvival(t, p, func() converse.Store { return open(seed) })
				})
			}
		})
	}
}

// checkSurvival runs the plan p on the sessions open opens.
func checkSurvival(t *testing.T, p survivalPlan, open func() converse.Store) {
	var runs runCounter
	var srv *bedrocktest.Server
	reg := survivalTools(t, p, &runs, func() { srv.Close() })
	var h bedrocktest.Handler = byHistory(p.replies())
	if p.kill == killFault {
		h = faulty(h, p.killAt, func(context.Context) error { return p.fault() })
	}
	srv, client := serve(t, h)
	crashAfter := 0
	if p.kill == killCrash {
		crashAfter = p.killAt
	}
	store, first := recordSaves(open(), crashAfter)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var events atomic.Int32
	approve := func(_ context.Context, c converse.Call) (converse.Decision, error) {
		pc := p.call(c.ID)
		return converse.Decision{Verdict: pc.verdict, By: "the test", Reason: "planned"}, nil
	}
	options := func(st converse.Store, kill bool) func(*converse.Options) {
		return func(o *converse.Options) {
			o.Session, o.Approver = &converse.Session{Store: st, ID: "s"}, approve
			if kill && p.kill == killCancel {
				o.OnEvent = func(converse.Event) {
					if int(events.Add(1)) == p.killAt {
						cancel()
					}
				}
			}
		}
	}
	c := converse.New(bedrockruntime.New(client.Options(), noRetries), claude, reg, options(store, true))
	sent, err := c.Send(ctx, "go")

	st, lerr := open().Load(context.Background(), "s")
	require.NoError(t, lerr, "the prompt was saved before the first model call")
	_, fresh := serve(t, byHistory(p.replies()))
	restarted, again := recordSaves(open(), 0)
	rc, rerr := converse.Restore(fresh, reg, st, options(restarted, false))
	require.NoError(t, rerr)
	var decisions []converse.Decision
	decide := func(pending []converse.Call) {
		decisions = nil
		for _, call := range pending {
			decisions = append(decisions, converse.Decision{ID: call.ID, Verdict: p.call(call.ID).later, By: "the reviewer", Reason: "later"})
		}
	}
	decide(st.Pending)
	final := ""
	if err == nil {
		final = sent.Text
	}
resuming:
	for range 2*len(p.rounds) + 2 {
		res, err := rc.Resume(context.Background(), decisions...)
		var paused *converse.PausedError
		switch {
		case errors.As(err, &paused):
			decide(paused.Pending)
			continue
		case errors.Is(err, converse.ErrNothingToResume):
			require.Equal(t, "done", final, "only a finished conversation has nothing to resume")
		default:
			require.NoError(t, err)
			final = res.Text
		}
		break resuming
	}
	require.Equal(t, "done", final)

	for i, b := range append(first.saved, again.saved...) {
		var saved converse.State
		require.NoError(t, json.Unmarshal(b, &saved), "state %d:\n%s", i, b)
		checkState(t, &saved, reg)
	}
	assertValid(t, rc, claude)
	checkRuns(t, p, rc.History(), runs.snapshot())
}

// checkRuns requires each planned call to be answered once in history and to
// have run at most once. It must have run exactly once unless denied, or cut
// off by a cancellation or a crash, and then answered with an error.
func checkRuns(t *testing.T, p survivalPlan, history []types.Message, runs map[string]int) {
	t.Helper()
	results := map[string][]string{}
	for _, m := range history {
		for _, b := range m.Content {
			if r, ok := b.(*types.ContentBlockMemberToolResult); ok {
				txt := ""
				if len(r.Value.Content) > 0 {
					if tb, ok := r.Value.Content[0].(*types.ToolResultContentBlockMemberText); ok {
						txt = tb.Value
					}
				}
				id := aws.ToString(r.Value.ToolUseId)
				results[id] = append(results[id], txt)
			}
		}
	}
	for _, round := range p.rounds {
		for _, c := range round {
			require.Len(t, results[c.id], 1, "call %s is answered once", c.id)
			got := results[c.id][0]
			switch {
			case c.denied():
				assert.Zero(t, runs[c.id], "denied call %s never runs", c.id)
				assert.True(t, strings.HasPrefix(got, "Error: the call was denied by "), "call %s: %s", c.id, got)
			case p.kill == killCancel || p.kill == killCrash:
				assert.LessOrEqual(t, runs[c.id], 1, "call %s runs at most once", c.id)
				if runs[c.id] == 0 {
					assert.True(t, strings.HasPrefix(got, "Error: "), "call %s did not run: %s", c.id, got)
				}
			default:
				assert.Equal(t, 1, runs[c.id], "call %s runs exactly once", c.id)
			}
			if c.id == p.panicOn && p.kill != killCancel && p.kill != killCrash { // else it may be answered as cancelled or interrupted
				assert.Contains(t, got, "step exploded")
			}
		}
	}
}
