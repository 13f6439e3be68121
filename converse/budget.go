package converse

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/models"
	"github.com/tooluse/bedrock/converse/internal/wire"
	"github.com/tooluse/bedrock/converse/modelinfo"
)

// ErrBudget means a limit of Options.Budget was reached. The error is a
// *BudgetError, which says which limit and what was spent.
var ErrBudget = errors.New("budget reached")

// Budget bounds what a conversation spends. A limit is never passed. Before
// each model call (summaries and corrections included) the estimated input
// must fit in what is left. The call's maxTokens is capped, for that call
// only, to what is left after it. Before a tool round starts, its calls must
// fit in the tool calls left. After each call its real usage is counted. A
// limit reached ends the Send or Resume at a step boundary, before the model
// call or before the round's calls start. It ends it with a *BudgetError
// (errors.Is(err, ErrBudget)) and stops the task (see Conversation.Stop). The
// round's calls are answered as not run. The next Send sends its prompt at
// once; a Resume with a raised limit (Restore the State with another Budget,
// as -session does) goes on with the task.
type Budget struct {
	// Send limits each Send or Resume; Conversation the whole
	// conversation, counted from its State's Usage and ToolCalls (and so
	// across Restore).
	Send, Conversation Limits
	// WallTime bounds each Send or Resume, checked before each model call
	// and before each tool round; 0 means none.
	WallTime time.Duration
}

// Limits are the limits of a Budget; 0 means no limit.
type Limits struct {
	// InputTokens bounds the input tokens as Bedrock bills them: input,
	// cache reads and cache writes together. OutputTokens bounds the output
	// tokens, and TotalTokens both.
	InputTokens, OutputTokens, TotalTokens int
	// ToolCalls bounds the client tool calls run (or decided).
	ToolCalls int
	// CostUSD bounds the cost in US dollars, at Options.Prices or the
	// price table (see modelinfo.PricesOf); with neither, a model call fails.
	CostUSD float64
}

// Spent is what a conversation spent against a Budget.
type Spent struct {
	Usage     Usage
	ToolCalls int
	WallTime  time.Duration
	// CostUSD is Usage in dollars; 0 when the prices are unknown.
	CostUSD float64
}

// BudgetError reports the limit that ended a Send or Resume.
type BudgetError struct {
	// Limit names it: "input tokens", "output tokens", "total tokens",
	// "tool calls", "wall time" or "cost".
	Limit string
	// Conversation says it is a limit of Budget.Conversation, not of
	// Budget.Send (WallTime is the Send's).
	Conversation bool
	// Max is the limit's value (tokens, calls, seconds or dollars), Spent
	// what its scope had spent, and Needed what the next step would have
	// needed (the estimated input, the round's calls), 0 when none was left.
	Max    float64
	Spent  Spent
	Needed float64
}

func (e *BudgetError) Error() string {
	scope := "send"
	if e.Conversation {
		scope = "conversation"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %s limit %s reached", ErrBudget, scope, e.Limit, e.amount(e.Max))
	if sp := e.Spent; sp.Usage == (Usage{}) && sp.ToolCalls == 0 && sp.CostUSD == 0 && e.Limit != "wall time" {
		b.WriteString(" before anything was spent")
		if e.Needed > 0 {
			fmt.Fprintf(&b, ": the first step needs %s", e.amount(e.Needed))
		}
		return b.String()
	}
	fmt.Fprintf(&b, ": spent %s", e.amount(e.spentOf()))
	if e.Needed > 0 {
		fmt.Fprintf(&b, ", the next step needs %s", e.amount(e.Needed))
	}
	if e.Limit != "cost" && e.Spent.CostUSD > 0 {
		fmt.Fprintf(&b, " ($%.4f)", e.Spent.CostUSD)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrBudget) true.
func (e *BudgetError) Is(target error) bool { return target == ErrBudget }

func (e *BudgetError) spentOf() float64 {
	u := e.Spent.Usage
	switch e.Limit {
	case "input tokens":
		return float64(billedInput(u))
	case "output tokens":
		return float64(u.OutputTokens)
	case "total tokens":
		return float64(billedInput(u) + u.OutputTokens)
	case "tool calls":
		return float64(e.Spent.ToolCalls)
	case "wall time":
		return e.Spent.WallTime.Seconds()
	}
	return e.Spent.CostUSD
}

func (e *BudgetError) amount(v float64) string {
	switch e.Limit {
	case "cost":
		return fmt.Sprintf("$%.4f", v)
	case "wall time":
		return time.Duration(v * float64(time.Second)).Round(time.Millisecond).String()
	case "tool calls":
		return fmt.Sprintf("%d calls", int(v))
	}
	return fmt.Sprintf("%d tokens", int(v))
}

// billedInput is the input tokens of u as Bedrock bills them.
func billedInput(u Usage) int {
	return u.InputTokens + u.CacheReadInputTokens + u.CacheWriteInputTokens
}

// limits are the limits of a scope: of the conversation, or of the Send.
func (b *Budget) limits(conversation bool) Limits {
	if conversation {
		return b.Conversation
	}
	return b.Send
}

// accounts price a conversation's model calls and hold its runs to its
// Budget, by its clock. They keep what the whole conversation spent under
// a mutex of their own, as State reads it during a Send; a run keeps its
// own tally (under sendMu) and hands it to them.
type accounts struct {
	modelID string
	prices  *modelinfo.Prices // of modelID: Options.Prices or the price table's; nil if unknown
	budget  *Budget
	now     func() time.Time

	mu    sync.Mutex
	total tally // the conversation's, counted from its restored State
}

// tally is what a scope of a Budget spent: a run, or the conversation.
type tally struct {
	usage     Usage     // of every model call, summaries included
	cost      dollars   // of usage, each call at its model's prices
	toolCalls int       // the calls of its tool rounds
	start     time.Time // when a run began, for Budget.WallTime
}

// newAccounts are the accounts of a conversation with the model modelID
// and the options o.
func newAccounts(modelID string, o *Options) *accounts {
	a := &accounts{modelID: modelID, prices: o.Prices, budget: o.Budget, now: o.now}
	if a.prices == nil {
		if p, ok := modelinfo.PricesOf(modelID); ok {
			a.prices = &p
		}
	}
	return a
}

// pricesOf are the prices of model, a model the conversation called, and
// whether they are known: Options.Prices for the conversation's own model,
// the price table's for it and for a fallback model.
func (a *accounts) pricesOf(model string) (modelinfo.Prices, bool) {
	if model == a.modelID {
		if a.prices == nil {
			return modelinfo.Prices{}, false
		}
		return *a.prices, true
	}
	return modelinfo.PricesOf(model)
}

// count counts u, used by a model call of model, in run's tally and the
// conversation's.
func (a *accounts) count(run *tally, model string, u Usage) {
	a.countPriced(run, u, a.add(dollars{}, model, u))
}

// countPriced counts u, which cost d, in run's tally and the
// conversation's.
func (a *accounts) countPriced(run *tally, u Usage, d dollars) {
	run.usage, run.cost = run.usage.Add(u), run.cost.plus(d)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.total.usage, a.total.cost = a.total.usage.Add(u), a.total.cost.plus(d)
}

// restore makes u and toolCalls, of a restored State, what the
// conversation spent; the calls before are priced as its own model's.
func (a *accounts) restore(u Usage, toolCalls int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.total = tally{usage: u, cost: a.add(dollars{}, a.modelID, u), toolCalls: toolCalls}
}

// totals are the conversation's usage and tool calls, for its State.
func (a *accounts) totals() (Usage, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.total.usage, a.total.toolCalls
}

// dollars is a sum of costs, each at the prices of the model that ran the
// call; unknown once a model without prices ran one.
type dollars struct {
	usd     float64
	unknown bool
}

// add counts u, used by a call of model.
func (a *accounts) add(d dollars, model string, u Usage) dollars {
	p, ok := a.pricesOf(model)
	if !ok {
		return dollars{unknown: true}
	}
	if !d.unknown {
		d.usd += u.Cost(p)
	}
	return d
}

// plus is the sum of d and e: unknown if either is, as add counts.
func (d dollars) plus(e dollars) dollars {
	if d.unknown || e.unknown {
		return dollars{unknown: true}
	}
	return dollars{usd: d.usd + e.usd}
}

// value is d for a Result: nil when unknown.
func (d dollars) value() *float64 {
	if d.unknown {
		return nil
	}
	return aws.Float64(d.usd)
}

// spent is what the scope of a Budget's limits spent so far: the run's,
// or the conversation's.
func (a *accounts) spent(run *tally, conversation bool) Spent {
	t := *run
	if conversation {
		a.mu.Lock()
		t = a.total
		a.mu.Unlock()
	}
	return Spent{Usage: t.usage, ToolCalls: t.toolCalls, WallTime: a.now().Sub(run.start), CostUSD: t.cost.usd}
}

// budgeted is the step of the model call req, within the budget: the
// estimated input fits what is left of each limit, and the call's
// maxTokens is capped to what is left after it. A limit that leaves no
// room ends the run, at the step boundary the history is at.
func (c *Conversation) budgeted(ctx context.Context, req *ModelCall) (*Step, error) {
	c.run.await = req
	if c.opts.Budget == nil {
		return &Step{ModelCall: req}, nil
	}
	// Encoding the request to estimate it costs as much as a turn's
	// validation: only a Budget pays for it.
	req.estimate = wire.EstimateTokens(req.Input)
	room, err := c.accounts.room(&c.run.spent, aws.ToString(req.Input.ModelId), req.estimate, minOutput(req.Input))
	if errors.Is(err, ErrBudget) {
		return c.stopRun(ctx, c.kept(), nil, nil, err)
	}
	if err != nil {
		return c.run.fail(c.kept(), err)
	}
	if room < math.MaxInt {
		capMaxTokens(req.Input, room)
	}
	return &Step{ModelCall: req}, nil
}

// room is the most output tokens a call of model with estimate input tokens
// may produce within every limit (math.MaxInt without one), run having spent
// what it did. Its error is the *BudgetError of the wall time, or of a limit
// that leaves the call fewer than need.
func (a *accounts) room(run *tally, model string, estimate, need int) (int, error) {
	if err := a.overTime(run); err != nil {
		return 0, err
	}
	room := math.MaxInt
	for _, conv := range []bool{false, true} {
		left, err := a.outputRoom(a.budget.limits(conv), conv, a.spent(run, conv), model, estimate, need)
		if err != nil {
			return 0, err
		}
		room = min(room, left)
	}
	return room, nil
}

// minOutput is the fewest output tokens the model call in may be given. It is
// 1, or with extended thinking on a budget (and not interleaved) one more than
// budget_tokens. Bedrock rejects a maxTokens at or under it ("`max_tokens`
// must be greater than `thinking.budget_tokens`").
func minOutput(in *bedrockruntime.ConverseInput) int {
	d := in.AdditionalModelRequestFields
	if d == nil {
		return 1
	}
	b, err := d.MarshalSmithyDocument()
	if err != nil {
		return 1
	}
	th, on := models.Parse(aws.ToString(in.ModelId)).BudgetThinking(b)
	if !on || th.Budget == nil || th.Interleaved {
		return 1
	}
	return max(*th.Budget+1, 1)
}

// outputRoom is the most output tokens a call of model with estimate input
// tokens may produce within lim (math.MaxInt without a limit), its scope
// having spent s. Its error is the *BudgetError of a limit that leaves the
// call fewer than need.
func (a *accounts) outputRoom(lim Limits, conv bool, s Spent, model string, estimate, need int) (int, error) {
	u := s.Usage
	fail := func(limit string, max, needed float64) error {
		return &BudgetError{Limit: limit, Conversation: conv, Max: max, Spent: s, Needed: needed}
	}
	room := math.MaxInt
	if lim.InputTokens > 0 && billedInput(u)+estimate > lim.InputTokens {
		return 0, fail("input tokens", float64(lim.InputTokens), float64(estimate))
	}
	if lim.OutputTokens > 0 {
		room = lim.OutputTokens - u.OutputTokens
		if room < need {
			needed := 0.0 // none was left
			if need > 1 {
				needed = float64(need) // thinking's budget was not
			}
			return 0, fail("output tokens", float64(lim.OutputTokens), needed)
		}
	}
	if lim.TotalTokens > 0 {
		left := lim.TotalTokens - billedInput(u) - u.OutputTokens - estimate
		if left < need {
			return 0, fail("total tokens", float64(lim.TotalTokens), float64(estimate+need))
		}
		room = min(room, left)
	}
	if lim.CostUSD > 0 {
		p, ok := a.pricesOf(model)
		if !ok {
			return 0, fmt.Errorf("a cost limit needs the prices of model %s: set Options.Prices", model)
		}
		// The input is priced as a cache write where that costs more: the
		// estimate cannot tell what the cache will hold.
		in := float64(estimate) * max(p.Input, p.CacheWrite, p.CacheWrite1h) / 1e6
		left := lim.CostUSD - s.CostUSD - in
		outTokens := math.MaxInt
		if p.Output > 0 {
			outTokens = int(min(left/p.Output*1e6, float64(math.MaxInt32)))
		}
		if left <= 0 || outTokens < need {
			return 0, fail("cost", lim.CostUSD, in+float64(need)*p.Output/1e6)
		}
		room = min(room, outTokens)
	}
	return room, nil
}

// capMaxTokens caps the maxTokens of in to room, on a copy of its
// inference configuration: the caller's is never changed.
func capMaxTokens(in *bedrockruntime.ConverseInput, room int) {
	room = min(room, math.MaxInt32)
	ic := types.InferenceConfiguration{}
	if in.InferenceConfig != nil {
		ic = *in.InferenceConfig
	}
	if ic.MaxTokens != nil && int(*ic.MaxTokens) <= room {
		return
	}
	ic.MaxTokens = aws.Int32(int32(room))
	in.InferenceConfig = &ic
}

// overTime is the *BudgetError of a run past its WallTime, or nil.
func (a *accounts) overTime(run *tally) error {
	b := a.budget
	if b == nil || b.WallTime <= 0 {
		return nil
	}
	if s := a.spent(run, false); s.WallTime >= b.WallTime {
		return &BudgetError{Limit: "wall time", Max: b.WallTime.Seconds(), Spent: s}
	}
	return nil
}

// startRound counts the n calls of a tool round of run about to start, or
// returns the *BudgetError of a limit they do not fit (or of the wall
// time), counting nothing.
func (a *accounts) startRound(run *tally, n int) error {
	if err := a.overTime(run); err != nil {
		return err
	}
	if b := a.budget; b != nil {
		for _, conv := range []bool{false, true} {
			lim := b.limits(conv)
			if s := a.spent(run, conv); lim.ToolCalls > 0 && s.ToolCalls+n > lim.ToolCalls {
				return &BudgetError{Limit: "tool calls", Conversation: conv, Max: float64(lim.ToolCalls), Spent: s, Needed: float64(n)}
			}
		}
	}
	run.toolCalls += n
	a.mu.Lock()
	a.total.toolCalls += n
	a.mu.Unlock()
	return nil
}
