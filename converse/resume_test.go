package converse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/tools"
)

// runCounter counts the runs of each tool call, by toolUseId.
type runCounter struct {
	mu   sync.Mutex
	runs map[string]int
}

func (r *runCounter) add(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs == nil {
		r.runs = map[string]int{}
	}
	r.runs[id]++
}

func (r *runCounter) snapshot() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.runs {
		out[k] = v
	}
	return out
}

type stepIn struct {
	N int `json:"n"`
}

// countingTools are "step", which counts its runs and may panic, and
// "send", which needs approval and counts its runs too.
func countingTools(t *testing.T, runs *runCounter, panicOn string) *tools.Registry {
	t.Helper()
	step, err := tools.New("step", "Does a step.", func(ctx context.Context, in stepIn) (int, error) {
		id := tools.CallID(ctx)
		runs.add(id)
		if id == panicOn {
			panic("step exploded")
		}
		return in.N * 2, nil
	})
	require.NoError(t, err)
	send, err := tools.New("send", "Sends a message; needs approval.", func(ctx context.Context, in stepIn) (string, error) {
		id := tools.CallID(ctx)
		runs.add(id)
		return "sent", nil
	}, func(o *tools.Options) { o.RequireApproval = true })
	require.NoError(t, err)
	reg, err := tools.NewRegistry(step, send)
	require.NoError(t, err)
	return reg
}

// threeRounds is a conversation of three tool rounds and an answer.
func threeRounds() []*bedrocktest.Reply {
	return []*bedrocktest.Reply{
		bedrocktest.ToolUse("one", bedrocktest.Call{ID: "s1", Name: "step", Input: map[string]any{"n": 1}}),
		bedrocktest.ToolUse("two", bedrocktest.Call{ID: "s2", Name: "step", Input: map[string]any{"n": 2}},
			bedrocktest.Call{ID: "s3", Name: "step", Input: map[string]any{"n": 3}}),
		bedrocktest.ToolUse("three", bedrocktest.Call{ID: "s4", Name: "step", Input: map[string]any{"n": 4}}),
		bedrocktest.Text("done"),
	}
}

// faulty answers with script, except that the model call numbered failAt
// fails with fault, without using up a reply.
func faulty(script bedrocktest.Handler, failAt int, fault func(ctx context.Context) error) bedrocktest.Handler {
	var mu sync.Mutex
	n := 0
	return bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		mu.Lock()
		n++
		fail := n == failAt
		mu.Unlock()
		if fail {
			return nil, fault(ctx)
		}
		return script.ServeConverse(ctx, req)
	})
}

// noRetries makes API errors reach the loop at once.
func noRetries(o *bedrockruntime.Options) { o.Retryer = aws.NopRetryer{} }

// checkState requires st to be resumable and to make, with its open turn
// answered, a request that bedrocktest.Validate accepts.
func checkState(t *testing.T, st *converse.State, reg *tools.Registry) {
	t.Helper()
	b, err := json.Marshal(st)
	require.NoError(t, err)
	var back converse.State
	require.NoError(t, json.Unmarshal(b, &back), "%s", b)
	_, err = converse.Restore(nil, reg, &back)
	require.NoError(t, err)
	msgs := back.Messages
	if len(msgs) == 0 {
		return
	}
	last := msgs[len(msgs)-1]
	if last.Role == types.ConversationRoleAssistant {
		answer := types.Message{Role: types.ConversationRoleUser}
		for _, blk := range last.Content {
			if tu, ok := blk.(*types.ContentBlockMemberToolUse); ok {
				answer.Content = append(answer.Content, &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
					ToolUseId: tu.Value.ToolUseId, Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "ok"}}}})
			}
		}
		if len(answer.Content) == 0 {
			answer.Content = []types.ContentBlock{text("next")}
		}
		msgs = append(msgs, answer)
	}
	cfg, err := (&converse.Executor{Registry: reg}).ToolConfig(nil)
	require.NoError(t, err)
	if e := bedrocktest.Validate(&bedrocktest.Request{Operation: "Converse", ConverseInput: bedrockruntime.ConverseInput{ModelId: aws.String(back.ModelID), Messages: msgs, ToolConfig: cfg}}); e != nil {
		t.Fatalf("saved state is not a valid request: %v\n%s", e, b)
	}
}

// TestResumeAfterFailureAtEveryTurn fails each model call of a three-round
// conversation in turn, with a throttle, a 5xx or a cancellation. Then it
// restores the saved session in a fresh Conversation and resumes it. The
// answer comes, and every tool call has run exactly once.
func TestResumeAfterFailureAtEveryTurn(t *testing.T) {
	faults := map[string]func(cancel context.CancelFunc) func(ctx context.Context) error{
		"throttle": func(context.CancelFunc) func(context.Context) error {
			return func(context.Context) error { return bedrocktest.Throttling() }
		},
		"5xx": func(context.CancelFunc) func(context.Context) error {
			return func(context.Context) error { return bedrocktest.InternalServer() }
		},
		"cancel": func(cancel context.CancelFunc) func(context.Context) error {
			return func(ctx context.Context) error {
				cancel()
				<-ctx.Done() // the client gave up
				return ctx.Err()
			}
		},
	}
	for name, fault := range faults {
		for failAt := 1; failAt <= 4; failAt++ {
			t.Run(fmt.Sprintf("%s at turn %d", name, failAt), func(t *testing.T) {
				var runs runCounter
				reg := countingTools(t, &runs, "")
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				_, client := serve(t, faulty(bedrocktest.Script(threeRounds()...), failAt, fault(cancel)))
				client = bedrockruntime.New(client.Options(), noRetries)
				store := filestore.Store{Dir: t.TempDir()}
				session := func(o *converse.Options) {
					o.Session = &converse.Session{Store: store, ID: "s"}
					o.OnEvent = func(ev converse.Event) {
						if _, ok := ev.(converse.StateSaved); ok {
							st, err := store.Load(context.Background(), "s")
							require.NoError(t, err)
							checkState(t, st, reg)
						}
					}
				}
				c := converse.New(client, claude, reg, session)
				_, err := c.Send(ctx, "go")
				require.Error(t, err)
				assert.Contains(t, err.Error(), fmt.Sprintf("converse: turn %d: ", failAt))
				if failAt > 1 {
					_, err = c.Send(context.Background(), "again")
					require.ErrorIs(t, err, converse.ErrInterrupted)
				}

				st, err := store.Load(context.Background(), "s")
				require.NoError(t, err)
				assert.Equal(t, c.State().Messages, st.Messages)
				fresh, err := converse.Restore(client, reg, st, session)
				require.NoError(t, err)
				res, err := fresh.Resume(context.Background())
				require.NoError(t, err)
				assert.Equal(t, "done", res.Text)
				assert.Equal(t, map[string]int{"s1": 1, "s2": 1, "s3": 1, "s4": 1}, runs.snapshot(), "each call ran once")
				assert.Equal(t, 4*15, fresh.State().Usage.TotalTokens, "usage of every model call, across the processes")
				assertValid(t, fresh, claude)
				_, err = fresh.Resume(context.Background())
				require.ErrorIs(t, err, converse.ErrNothingToResume)
			})
		}
	}
}

// TestPanicIsAnsweredOnce: a tool that panics is answered with an error
// result; after a failure later on, resuming does not run it again.
func TestPanicIsAnsweredOnce(t *testing.T) {
	var runs runCounter
	reg := countingTools(t, &runs, "s2")
	srv, client := serve(t, faulty(bedrocktest.Script(threeRounds()...), 3, func(context.Context) error { return bedrocktest.ServiceUnavailable() }))
	c := converse.New(bedrockruntime.New(client.Options(), noRetries), claude, reg)
	_, err := c.Send(context.Background(), "go")
	var unavailable *types.ServiceUnavailableException
	require.ErrorAs(t, err, &unavailable)
	res, err := c.Resume(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "done", res.Text)
	assert.Equal(t, map[string]int{"s1": 1, "s2": 1, "s3": 1, "s4": 1}, runs.snapshot())
	reqs := srv.Requests()
	assert.Contains(t, string(reqs[len(reqs)-1].Body), "step exploded", "the model saw the panic once")
}

func TestResumeWithNothingToResume(t *testing.T) {
	_, client := serve(t, bedrocktest.Script(bedrocktest.Text("hi")))
	c := converse.New(client, claude, nil)
	_, err := c.Resume(context.Background())
	require.ErrorIs(t, err, converse.ErrNothingToResume)
	_, err = c.Send(context.Background(), "hello")
	require.NoError(t, err)
	_, err = c.Resume(context.Background(), converse.Call{ID: "x"}.Approve())
	require.ErrorIs(t, err, converse.ErrNothingToResume)
}

func TestSessionNeedsAnID(t *testing.T) {
	c := converse.New(nil, claude, nil, func(o *converse.Options) { o.Session = &converse.Session{Store: filestore.Store{Dir: t.TempDir()}} })
	_, err := c.Send(context.Background(), "hi")
	require.ErrorContains(t, err, "Options.Session needs a Store and an ID")
}

// eventLog records the events of the kinds a Resume reports, by name.
type eventLog []string

func (l *eventLog) options(o *converse.Options) {
	o.OnEvent = func(ev converse.Event) {
		switch e := ev.(type) {
		case converse.Resumed:
			*l = append(*l, fmt.Sprintf("resumed %d %d", e.Messages, e.Decisions))
		case converse.ApprovalDecided:
			*l = append(*l, fmt.Sprintf("decided %s %s", e.Call.ID, e.Decision.Verdict))
		case converse.ToolEnd:
			*l = append(*l, fmt.Sprintf("end %s %v %v", e.ID, e.Status, e.Err))
		}
	}
}

// TestResumeEventsInOrder: Resume reports that it resumes first, then the
// decisions it applies and the calls it answers as interrupted (a ToolEnd
// with ErrCallInterrupted), then the calls it runs.
func TestResumeEventsInOrder(t *testing.T) {
	t.Run("paused", func(t *testing.T) {
		var runs runCounter
		reg := countingTools(t, &runs, "")
		_, client := serve(t, bedrocktest.Script(stepAndSend()...))
		c := converse.New(client, claude, reg)
		_, err := c.Send(context.Background(), "send it")
		require.ErrorIs(t, err, converse.ErrPaused)
		var events eventLog
		fresh, err := converse.Restore(client, reg, c.State(), events.options)
		require.NoError(t, err)
		_, err = fresh.Resume(context.Background(), converse.Call{ID: "m1"}.Approve())
		require.NoError(t, err)
		assert.Equal(t, eventLog{"resumed 2 1", "decided m1 approved", "end m1 success <nil>"}, events)
	})
	t.Run("interrupted", func(t *testing.T) {
		var runs runCounter
		var st converse.State
		require.NoError(t, json.Unmarshal([]byte(`{"version": 1, "modelId": "`+claude+`", "messages": [
			{"role": "user", "content": [{"text": "step"}]},
			{"role": "assistant", "content": [{"toolUse": {"toolUseId": "s1", "name": "step", "input": {"n": 1}}}]}],
			"openTurn": {"results": [], "answered": [], "pending": [], "started": true}}`), &st))
		_, client := serve(t, bedrocktest.Script(bedrocktest.Text("done")))
		var events eventLog
		var end converse.ToolEnd
		c, err := converse.Restore(client, countingTools(t, &runs, ""), &st, events.options, func(o *converse.Options) {
			log := o.OnEvent
			o.OnEvent = func(ev converse.Event) {
				if e, ok := ev.(converse.ToolEnd); ok {
					end = e
				}
				log(ev)
			}
		})
		require.NoError(t, err)
		_, err = c.Resume(context.Background())
		require.NoError(t, err)
		assert.Empty(t, runs.snapshot())
		assert.Equal(t, eventLog{"resumed 2 0", "end s1 error " + converse.ErrCallInterrupted.Error()}, events)
		require.ErrorIs(t, end.Err, converse.ErrCallInterrupted)
		assert.Equal(t, "step", end.Name)
		assert.JSONEq(t, `{"n": 1}`, string(end.Input))
	})
}

// TestResumeDecisionErrorNamesEveryProblem: decisions that both miss a
// pending call and name a call that is not pending are refused with an
// error naming both.
func TestResumeDecisionErrorNamesEveryProblem(t *testing.T) {
	var runs runCounter
	_, client := serve(t, bedrocktest.Script(stepAndSend()...))
	c := converse.New(client, claude, countingTools(t, &runs, ""))
	_, err := c.Send(context.Background(), "send it")
	require.ErrorIs(t, err, converse.ErrPaused)
	_, err = c.Resume(context.Background(), converse.Call{ID: "nope"}.Approve(), converse.Call{ID: "s1"}.Approve())
	require.ErrorIs(t, err, converse.ErrDecision)
	assert.EqualError(t, err, `converse: Resume: bad decisions: no decision for the pending call "m1" (tool send); "nope" is not a pending call; "s1" is not a pending call`)
}

// stepEvents describes the events that number turns, one a line.
type stepEvents struct {
	mu    sync.Mutex
	lines []string
}

func (s *stepEvents) record(ev converse.Event) {
	var line string
	switch e := ev.(type) {
	case converse.TurnEnd:
		line = fmt.Sprintf("turn %d: model call", e.Turn)
	case converse.ToolStart:
		line = fmt.Sprintf("turn %d: start %s", e.Turn, e.ID)
	case converse.ToolEnd:
		line = fmt.Sprintf("turn %d: end %s", e.Turn, e.ID)
	case converse.ApprovalDecided:
		line = fmt.Sprintf("turn %d: decided %s %s", e.Turn, e.Call.ID, e.Decision.Verdict)
	case converse.StateSaved:
		line = fmt.Sprintf("turn %d: saved %d messages, %d pending", e.Turn, e.Messages, e.Pending)
	default:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, line)
}

func (s *stepEvents) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	lines := s.lines
	s.lines = nil
	return lines
}

// TestPauseSavesOnceAndRestoredTurnsKeepTheirNumbers: a Send that pauses saves
// the paused step once (one StateSaved). The Resume of the restored state
// reports the calls it finishes with the number of the turn that asked for
// them, not 0. Its own model calls count from 1.
func TestPauseSavesOnceAndRestoredTurnsKeepTheirNumbers(t *testing.T) {
	for _, restore := range []bool{false, true} {
		t.Run(fmt.Sprintf("restored %v", restore), func(t *testing.T) {
			var runs runCounter
			reg := countingTools(t, &runs, "")
			_, client := serve(t, bedrocktest.Script(
				bedrocktest.ToolUse("first", bedrocktest.Call{ID: "s1", Name: "step", Input: map[string]any{"n": 1}}),
				bedrocktest.ToolUse("then", bedrocktest.Call{ID: "m1", Name: "send", Input: map[string]any{"n": 2}}),
				bedrocktest.Text("done"),
			))
			var events stepEvents
			store := filestore.Store{Dir: t.TempDir()}
			session := func(o *converse.Options) {
				o.Session, o.OnEvent = &converse.Session{Store: store, ID: "s"}, events.record
			}
			c := converse.New(client, claude, reg, session)
			_, err := c.Send(context.Background(), "go")
			require.ErrorIs(t, err, converse.ErrPaused)
			assert.Equal(t, []string{
				"turn 0: saved 1 messages, 0 pending",
				"turn 1: model call",
				"turn 1: saved 2 messages, 0 pending", // the reply, its call started
				"turn 1: start s1",
				"turn 1: end s1",
				"turn 1: saved 3 messages, 0 pending",
				"turn 2: model call",
				"turn 2: saved 4 messages, 1 pending",
			}, events.take())

			if restore {
				st, err := store.Load(context.Background(), "s")
				require.NoError(t, err)
				c, err = converse.Restore(client, reg, st, session)
				require.NoError(t, err)
			}
			res, err := c.Resume(context.Background(), converse.Call{ID: "m1"}.Approve())
			require.NoError(t, err)
			assert.Equal(t, "done", res.Text)
			assert.Equal(t, []string{
				"turn 2: decided m1 approved",
				"turn 2: saved 4 messages, 0 pending", // the call started
				"turn 2: start m1",
				"turn 2: end m1",
				"turn 2: saved 5 messages, 0 pending",
				"turn 1: model call",
				"turn 1: saved 6 messages, 0 pending",
			}, events.take())
			assert.Equal(t, map[string]int{"s1": 1, "m1": 1}, runs.snapshot())
		})
	}
}

// TestRestoredHistorySendsTheSameBytes: a history restored from its session
// is sent byte for byte as it was before, streamed or not, even where its
// strings hold characters that encoding/json escapes and the SDK's encoder
// does not (a call's input and a tool's JSON result here).
func TestRestoredHistorySendsTheSameBytes(t *testing.T) {
	type echoIn struct {
		Q string `json:"q"`
	}
	echo, err := tools.New("echo", "Echoes q; needs approval.", func(_ context.Context, in echoIn) (map[string]string, error) {
		return map[string]string{"said": in.Q}, nil
	}, func(o *tools.Options) { o.RequireApproval = true })
	require.NoError(t, err)
	reg, err := tools.NewRegistry(echo)
	require.NoError(t, err)
	var bodies []string
	for _, stream := range []bool{false, true} {
		for _, restore := range []bool{false, true} {
			srv, client := serve(t, bedrocktest.Script(
				bedrocktest.ToolUse("", bedrocktest.Call{ID: "e1", Name: "echo", Input: map[string]any{"q": "a<b & c>d\b\f"}}),
				bedrocktest.Text("done"),
			))
			store := filestore.Store{Dir: t.TempDir()}
			opts := func(o *converse.Options) {
				o.Session = &converse.Session{Store: store, ID: "s"}
				if stream {
					o.Stream = &converse.StreamPolicy{}
				}
			}
			c := converse.New(client, claude, reg, opts)
			_, err := c.Send(context.Background(), "echo it")
			require.ErrorIs(t, err, converse.ErrPaused)
			if restore {
				st, err := store.Load(context.Background(), "s")
				require.NoError(t, err)
				c, err = converse.Restore(client, reg, st, opts)
				require.NoError(t, err)
			}
			res, err := c.Resume(context.Background(), converse.Call{ID: "e1"}.Approve())
			require.NoError(t, err)
			require.Equal(t, "done", res.Text)
			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			bodies = append(bodies, string(reqs[1].Body))
		}
	}
	assert.Contains(t, bodies[0], `a<b & c>d`)
	for i, b := range bodies[1:] {
		assert.Equal(t, bodies[0], b, "run %d (stream %v, restored %v)", i+1, i+1 >= 2, (i+1)%2 == 1)
	}
}
