package agenttool_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/tools"
)

// guarded is a tool named "send" that needs approval and counts its runs.
func guarded(t *testing.T, runs *atomic.Int32) *tools.Tool {
	t.Helper()
	tool, err := tools.New("send", "Sends mail.", func(context.Context, struct{}) (string, error) {
		runs.Add(1)
		return "sent", nil
	}, func(o *tools.Options) { o.RequireApproval = true })
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func send(id string) *bedrocktest.Reply {
	return bedrocktest.ToolUse("sending", bedrocktest.Call{ID: id, Name: "send"})
}

// TestInnerApprovalAskedInProcess: the agent's calls that need approval
// go to the caller's Approver, named by their path.
func TestInnerApprovalAskedInProcess(t *testing.T) {
	for _, tt := range []struct {
		name     string
		decision converse.Decision
		runs     int32
		inner    string // what the agent's model sees of the call
	}{
		{"approve", converse.Call{}.Approve(), 1, "sent"},
		{"deny", converse.Call{}.Deny("the user", "no mail today"), 0, "no mail today"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var sends atomic.Int32
			inner := server(t, send("i1"), bedrocktest.Text("Mailed."))
			outer := server(t, delegate("o1", "mailer"), bedrocktest.Text("Done."))
			reg := registry(t, agent(t, "mailer", inner, registry(t, guarded(t, &sends))))
			var asked []converse.Call
			conv := converse.New(outer.Client(), model, reg, func(o *converse.Options) {
				o.Approver = func(_ context.Context, c converse.Call) (converse.Decision, error) {
					asked = append(asked, c)
					return tt.decision, nil
				}
			})
			res, err := conv.Send(context.Background(), "Mail it.")
			if err != nil {
				t.Fatal(err)
			}
			if len(asked) != 1 || asked[0].ID != "o1/i1" || asked[0].Tool != "send" {
				t.Errorf("the Approver was asked %+v, want the call o1/i1 of send", asked)
			}
			if sends.Load() != tt.runs || res.Text != "Done." || !strings.Contains(lastResult(t, inner), tt.inner) {
				t.Errorf("send ran %d times, the agent saw %q, the coordinator said %q", sends.Load(), lastResult(t, inner), res.Text)
			}
		})
	}
}

// TestInnerApprovalPausesAcrossProcesses: an agent's call that needs
// approval, at one or two levels down, pauses the coordinator. The
// coordinator's State names the call by its path. Another process restores
// the coordinator from that State, saved as JSON. Its Resume with a
// decision for the path continues the agents, then the coordinator. No
// call runs twice. With a Store, the paused agents are in it; without one,
// the coordinator's State carries them.
func TestInnerApprovalPausesAcrossProcesses(t *testing.T) {
	for _, tt := range []struct {
		levels int
		store  bool
	}{{1, true}, {2, true}, {1, false}, {2, false}} {
		levels := tt.levels
		t.Run(fmt.Sprintf("%s/store=%v", strings.Repeat("agent", levels), tt.store), func(t *testing.T) {
			var lookups, sends atomic.Int32
			store := &filestore.Store{Dir: t.TempDir()}
			mailer := server(t, lookup("i1"), send("i2"), bedrocktest.Text("Mailed."))
			var boss *bedrocktest.Server
			if levels == 2 {
				boss = server(t, delegate("b1", "mailer"), bedrocktest.Text("Delegated."))
			}
			outer := server(t, delegate("o1", "top"), bedrocktest.Text("Done."))
			// process makes the coordinator's tools, as each process does.
			process := func() *tools.Registry {
				reg := registry(t, counted(t, "lookup", &lookups), guarded(t, &sends))
				if levels == 1 {
					return registry(t, agent(t, "top", mailer, reg))
				}
				return registry(t, agent(t, "top", boss, registry(t, agent(t, "mailer", mailer, reg))))
			}
			session := func(o *converse.Options) {
				if tt.store {
					o.Session = &converse.Session{Store: store, ID: "coordinator"}
				}
			}
			first := converse.New(outer.Client(), model, process(), session)
			_, err := first.Send(context.Background(), "Mail it.")
			var paused *converse.PausedError
			if !errors.As(err, &paused) {
				t.Fatalf("err = %v, want a *PausedError", err)
			}
			path := map[int]string{1: "o1/i2", 2: "o1/b1/i2"}[levels]
			if len(paused.Pending) != 1 || paused.Pending[0].ID != path || paused.Pending[0].Tool != "send" {
				t.Fatalf("Pending = %+v, want the call %s of send", paused.Pending, path)
			}

			st := reread(t, first.State())
			if tt.store {
				if st, err = store.Load(context.Background(), "coordinator"); err != nil { // read back from its JSON file
					t.Fatal(err)
				}
			}
			conv, err := converse.Restore(outer.Client(), process(), st, session)
			if err != nil {
				t.Fatal(err)
			}
			if got := conv.State().Pending; len(got) != 1 || got[0].ID != path {
				t.Fatalf("the restored State's Pending = %+v, want %s", got, path)
			}
			if _, err := conv.Resume(context.Background(), converse.Call{ID: "o1/i9"}.Approve()); !errors.Is(err, converse.ErrDecision) {
				t.Errorf("a decision for no pending path: err = %v, want ErrDecision", err)
			}
			res, err := conv.Resume(context.Background(), converse.Call{ID: path}.Approve())
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "Done." || lookups.Load() != 1 || sends.Load() != 1 {
				t.Errorf("the coordinator said %q; lookup ran %d times and send %d, want each once", res.Text, lookups.Load(), sends.Load())
			}
			if n := len(mailer.Requests()); n != 3 {
				t.Errorf("the mailer's model was called %d times, want 3", n)
			}
		})
	}
}

// reread is st written as JSON and read back, as another process reads it.
func reread(t *testing.T, st *converse.State) *converse.State {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back converse.State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

// TestInnerApprovalPausedByTheCallersApprover: a caller's Approver that pauses
// an agent's call pauses the caller, and is not asked again for it.
func TestInnerApprovalPausedByTheCallersApprover(t *testing.T) {
	var sends atomic.Int32
	inner := server(t, send("i1"), bedrocktest.Text("Mailed."))
	outer := server(t, delegate("o1", "mailer"), bedrocktest.Text("Done."))
	asked := 0
	conv := converse.New(outer.Client(), model, registry(t, agent(t, "mailer", inner, registry(t, guarded(t, &sends)))), func(o *converse.Options) {
		o.Approver = func(context.Context, converse.Call) (converse.Decision, error) {
			asked++
			return converse.Decision{Verdict: converse.Paused}, nil
		}
	})
	_, err := conv.Send(context.Background(), "Mail it.")
	var paused *converse.PausedError
	if !errors.As(err, &paused) || len(paused.Pending) != 1 || paused.Pending[0].ID != "o1/i1" {
		t.Fatalf("err = %v, want the call o1/i1 pending", err)
	}
	if asked != 1 {
		t.Errorf("the Approver was asked %d times, want once", asked)
	}
	res, err := conv.Resume(context.Background(), converse.Call{ID: "o1/i1"}.Approve())
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Done." || sends.Load() != 1 {
		t.Errorf("the coordinator said %q and send ran %d times", res.Text, sends.Load())
	}
}

// TestInnerPauseWithoutStore: without a Store, the coordinator's State
// carries the paused agent, which its Resume continues with a denial.
func TestInnerPauseWithoutStore(t *testing.T) {
	var sends atomic.Int32
	inner := server(t, send("i1"), bedrocktest.Text("Mailed."))
	outer := server(t, delegate("o1", "mailer"), bedrocktest.Text("Done."))
	conv := converse.New(outer.Client(), model, registry(t, agent(t, "mailer", inner, registry(t, guarded(t, &sends)))))
	if _, err := conv.Send(context.Background(), "Mail it."); !errors.Is(err, converse.ErrPaused) {
		t.Fatalf("err = %v, want ErrPaused", err)
	}
	res, err := conv.Resume(context.Background(), converse.Call{ID: "o1/i1"}.Deny("the user", "not now"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Done." || sends.Load() != 0 || !strings.Contains(lastResult(t, inner), "not now") {
		t.Errorf("the coordinator said %q, send ran %d times, the agent saw %q", res.Text, sends.Load(), lastResult(t, inner))
	}
}

// TestInnerQuestionPassesUp: a question that an agent's tool asks
// pauses the coordinator with the question, and the answer reaches the
// tool.
func TestInnerQuestionPassesUp(t *testing.T) {
	asking, err := tools.New("where", "Asks where.", func(ctx context.Context, _ struct{}) (string, error) {
		a, ok := tools.AnswerOf(ctx)
		if !ok {
			return "", &tools.InputRequiredError{Question: tools.Question{Message: "Where?"}}
		}
		return "to " + string(a.Content), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	inner := server(t, bedrocktest.ToolUse("", bedrocktest.Call{ID: "i1", Name: "where"}), bedrocktest.Text("Asked."))
	outer := server(t, delegate("o1", "asker"), bedrocktest.Text("Done."))
	conv := converse.New(outer.Client(), model, registry(t, agent(t, "asker", inner, registry(t, asking))))
	_, err = conv.Send(context.Background(), "Ask.")
	var paused *converse.PausedError
	if !errors.As(err, &paused) || len(paused.Pending) != 1 || paused.Pending[0].ID != "o1/i1" || paused.Pending[0].Question == nil {
		t.Fatalf("err = %v, want the question of o1/i1", err)
	}
	if _, err := conv.Resume(context.Background(), converse.Call{ID: "o1/i1"}.Approve()); !errors.Is(err, converse.ErrDecision) {
		t.Errorf("an approval for a question: err = %v, want ErrDecision", err)
	}
	if _, err := conv.Resume(context.Background(), converse.Call{ID: "o1/i1"}.Accept(json.RawMessage(`{"env":"staging"}`))); err != nil {
		t.Fatal(err)
	}
	if got := lastResult(t, inner); !strings.Contains(got, "staging") {
		t.Errorf("the tool answered %q, want the answer's content", got)
	}
}

var update = flag.Bool("update", false, "write the golden files in testdata/ anew")

// TestPausedAgentStateForm: the JSON form of a coordinator paused by an agent's
// agent, with no Store (testdata/state-v1-nested.json; -update writes it
// again). The open turn's "nested" holds each paused agent's State by the
// call's toolUseId, one inside the other. The form read back resumes.
func TestPausedAgentStateForm(t *testing.T) {
	var sends atomic.Int32
	mailer := server(t, send("i1"), bedrocktest.Text("Mailed."))
	boss := server(t, delegate("b1", "mailer"), bedrocktest.Text("Delegated."))
	outer := server(t, delegate("o1", "top"), bedrocktest.Text("Done."))
	process := func() *tools.Registry {
		return registry(t, agent(t, "top", boss, registry(t, agent(t, "mailer", mailer, registry(t, guarded(t, &sends))))))
	}
	first := converse.New(outer.Client(), model, process())
	if _, err := first.Send(context.Background(), "Mail it."); !errors.Is(err, converse.ErrPaused) {
		t.Fatalf("err = %v, want ErrPaused", err)
	}
	saved, err := json.MarshalIndent(first.State(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/state-v1-nested.json"
	if *update {
		if err := os.WriteFile(golden, append(saved, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	var st converse.State
	if err := json.Unmarshal(want, &st); err != nil {
		t.Fatal(err)
	}
	if back, _ := json.MarshalIndent(&st, "", "  "); string(back) != string(saved) {
		t.Errorf("the state's form is not %s's:\n%s", golden, saved)
	}
	conv, err := converse.Restore(outer.Client(), process(), &st)
	if err != nil {
		t.Fatal(err)
	}
	res, err := conv.Resume(context.Background(), converse.Call{ID: "o1/b1/i1"}.Approve())
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Done." || sends.Load() != 1 {
		t.Errorf("the coordinator said %q, send ran %d times", res.Text, sends.Load())
	}
}
