package converse

import (
	"context"
	"sync"
	"time"

	"github.com/tooluse/bedrock/tools"
)

// nestedKey is the context key of a tool round's calls: see CallerOf.
type nestedKey struct{}

// nestedRound is what the calls of a tool round learn of the conversation
// that runs them: where it is saved, what its Budget has left, and its
// Approver. It gathers the usage the calls report, which the round then
// counts.
type nestedRound struct {
	a          *accounts
	session    *Session
	send, conv Spent     // spent when the round started
	start      time.Time // of the run, for Budget.WallTime

	approver func(context.Context, Call) (Decision, error) // Options.Approver
	asking   sync.Mutex                                    // held while the calls' nested conversations ask approver

	mu       sync.Mutex
	reported []pricedUsage

	states map[string]*State // the paused nested conversations the calls resume, by toolUseId (see Caller.State)
}

// pricedUsage is usage and what it cost.
type pricedUsage struct {
	usage Usage
	cost  dollars
}

// Caller is what a tool call learns of the conversation whose tool round
// runs it: where it is saved, what its Budget has left, and its Approver.
// For a call that a nested conversation paused, it holds that
// conversation's state and the decisions for it. A tool that runs a conversation of its own (see
// package agenttool) nests it so. A nil *Caller, of a context of no tool
// round, knows nothing and counts nothing.
type Caller struct {
	n         *nestedRound // nil for a call run with no round (Executor.Execute)
	id        string       // the call's toolUseId
	decisions []Decision
}

// CallerOf returns the Caller of the tool call that ctx was given for, or
// nil outside a tool round.
func CallerOf(ctx context.Context) *Caller {
	n, _ := ctx.Value(nestedKey{}).(*nestedRound)
	ds, _ := ctx.Value(decisionsKey{}).([]Decision)
	if n == nil && ds == nil {
		return nil
	}
	return &Caller{n: n, id: tools.CallID(ctx), decisions: ds}
}

// ReportUsage counts u, the usage of model calls made for the call (a
// nested conversation's Result.Usage, say), and costUSD, what they cost
// (nil if unknown). The caller counts them, once the call's round ends, in
// its Result's Usage and CostUSD, its State's Usage and its Budget. In
// Executor.Run, the usage goes back with the call's CallResult, which
// AnswerCalls counts alike.
func (c *Caller) ReportUsage(u Usage, costUSD *float64) {
	if c == nil || c.n == nil {
		return
	}
	d := dollars{unknown: true}
	if costUSD != nil {
		d = dollars{usd: *costUSD}
	}
	c.n.mu.Lock()
	defer c.n.mu.Unlock()
	c.n.reported = append(c.n.reported, pricedUsage{u, d})
}

// Session is the caller's Options.Session, or nil: a nested conversation
// may save its state beside the caller's. In Executor.Run it is nil.
func (c *Caller) Session() *Session {
	if c == nil || c.n == nil {
		return nil
	}
	return c.n.session
}

// Approver is the caller's Options.Approver, or nil, for the Approver of a
// nested conversation that the call runs. It asks the caller's Approver
// with the call's ID made a path: the ID of the caller's call, "/", then
// its own (see PausedError). The round's calls ask it one at a time, as the
// caller does.
func (c *Caller) Approver() func(context.Context, Call) (Decision, error) {
	if c == nil || c.n == nil || c.n.approver == nil {
		return nil
	}
	n, id := c.n, c.id
	return func(ctx context.Context, call Call) (Decision, error) {
		n.asking.Lock()
		defer n.asking.Unlock()
		call.ID = id + pathSep + call.ID
		return n.approver(ctx, call)
	}
}

// decisionsKey is the context key of Caller.Decisions.
type decisionsKey struct{}

// Decisions are those the caller's Resume gave for the calls of the nested
// conversation that paused the call, their IDs relative to it: the tool
// resumes that conversation with them (see PausedError). They are nil for
// a call that did not pause so.
func (c *Caller) Decisions() []Decision {
	if c == nil {
		return nil
	}
	return c.decisions
}

// State is the state of the nested conversation that paused the call, as
// its tool handed it up in the PausedError's State, or nil. The caller's
// State carries it, across processes too, until the caller's Resume runs
// the call again. The tool then restores that conversation from it and
// resumes it with Decisions. It is the caller's: the tool must not change
// it.
func (c *Caller) State() *State {
	if c == nil || c.n == nil {
		return nil
	}
	return c.n.states[c.id]
}

// resumeNested hands st, the paused nested conversation of the call id,
// to the call's run (see Caller.State).
func (n *nestedRound) resumeNested(id string, st *State) {
	if st == nil {
		return
	}
	if n.states == nil {
		n.states = map[string]*State{}
	}
	n.states[id] = st
}

// Budget is what the caller's Budget has left, less the usage the round's
// calls reported: a Budget for a nested conversation. Its Send limits are
// the least of the caller's Send and Conversation limits left. Its
// WallTime is what is left of the caller's. Tool calls are not limited:
// the nested conversation's are its own. Budget returns nil without a
// Budget, and a *BudgetError when a limit has nothing left.
func (c *Caller) Budget() (*Budget, error) {
	if c == nil || c.n == nil {
		return nil, nil
	}
	return c.n.left()
}

// left is what the Budget has left for the round's calls (see
// Caller.Budget); nil without a Budget.
func (n *nestedRound) left() (*Budget, error) {
	if n.a.budget == nil {
		return nil, nil
	}
	used, cost := n.usage()
	b := n.a.budget
	out := &Budget{}
	for _, conv := range []bool{false, true} {
		s := n.send
		if conv {
			s = n.conv
		}
		s.Usage, s.CostUSD = s.Usage.Add(used), s.CostUSD+cost.usd
		lim, err := limitsLeft(b.limits(conv), conv, s)
		if err != nil {
			return nil, err
		}
		out.Send = tighter(out.Send, lim)
	}
	if b.WallTime > 0 {
		took := n.a.now().Sub(n.start)
		if took >= b.WallTime {
			return nil, &BudgetError{Limit: "wall time", Max: b.WallTime.Seconds(), Spent: Spent{WallTime: took}}
		}
		out.WallTime = b.WallTime - took
	}
	return out, nil
}

// nested is the nestedRound of a tool round of r about to start, in a
// conversation with accounts a and options o.
func (r *run) nested(a *accounts, o *Options) *nestedRound {
	return &nestedRound{a: a, session: o.Session, approver: o.Approver, start: r.spent.start,
		send: a.spent(&r.spent, false), conv: a.spent(&r.spent, true)}
}

// usage sums what the calls reported, and its cost.
func (n *nestedRound) usage() (Usage, dollars) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var u Usage
	var d dollars
	for _, p := range n.reported {
		u, d = u.Add(p.usage), d.plus(p.cost)
	}
	return u, d
}

// countInto counts what the calls reported in r, the round's run.
func (n *nestedRound) countInto(r *run) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range n.reported {
		r.countPriced(n.a, p.usage, p.cost)
	}
	n.reported = nil // a call abandoned at its timeout may report late: it counts nowhere
}

// limitsLeft is what lim leaves of its scope's spending s, or the
// *BudgetError of a limit with nothing left.
func limitsLeft(lim Limits, conv bool, s Spent) (Limits, error) {
	u := s.Usage
	var out Limits
	for _, l := range []struct {
		name       string
		max, spent float64
		set        func(float64)
	}{
		{"input tokens", float64(lim.InputTokens), float64(billedInput(u)), func(v float64) { out.InputTokens = int(v) }},
		{"output tokens", float64(lim.OutputTokens), float64(u.OutputTokens), func(v float64) { out.OutputTokens = int(v) }},
		{"total tokens", float64(lim.TotalTokens), float64(billedInput(u) + u.OutputTokens), func(v float64) { out.TotalTokens = int(v) }},
		{"cost", lim.CostUSD, s.CostUSD, func(v float64) { out.CostUSD = v }},
	} {
		if l.max <= 0 {
			continue
		}
		if l.spent >= l.max {
			return Limits{}, &BudgetError{Limit: l.name, Conversation: conv, Max: l.max, Spent: s}
		}
		l.set(l.max - l.spent)
	}
	return out, nil
}

// tighter is the least of a and b, limit by limit, 0 being none.
func tighter(a, b Limits) Limits {
	return Limits{InputTokens: least(a.InputTokens, b.InputTokens), OutputTokens: least(a.OutputTokens, b.OutputTokens),
		TotalTokens: least(a.TotalTokens, b.TotalTokens), CostUSD: least(a.CostUSD, b.CostUSD)}
}

// least is the lesser limit of x and y, 0 being none.
func least[T int | float64](x, y T) T {
	if x == 0 || (y != 0 && y < x) {
		return y
	}
	return x
}
