package converse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/media"
	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/trim"
	"github.com/tooluse/bedrock/tools"
)

// Step is what a conversation driven one step at a time wants next: a
// model call (ModelCall), a token count (CountTokens), tool calls to run
// (Calls), decisions (Pending), the results of calls handed out before
// (Waiting), or nothing more (Result). It is a small union: one of them is
// set, and Calls may come with Pending. A step is never empty. Send and
// Resume are such a driver. An engine that owns retries and persistence (a
// Temporal workflow, a queue worker) is another, making the model calls and
// running the tools where it likes:
//
//	step, err := conv.Begin(ctx, prompt)
//	for err == nil && step.Result == nil {
//		report(step.Events...) // to the engine's log or UI, as Send does to OnEvent
//		switch {
//		case step.ModelCall != nil:
//			out, callErr := conv.Converse(ctx, step.ModelCall.Input) // or a client's, elsewhere
//			step, err = conv.HandleResponse(ctx, step.ModelCall, out, callErr)
//		case step.CountTokens != nil: // with ContextPolicy.CountTokens
//			out, countErr := client.CountTokens(ctx, step.CountTokens) // a *bedrockruntime.Client's
//			step, err = conv.HandleCount(ctx, step.CountTokens, out, countErr)
//		case len(step.Calls) > 0:
//			step, err = conv.AnswerCalls(ctx, runEach(step.Calls)...) // Executor.Run's CallResults
//		default: // step.Pending: wait for the decisions, or the answers to their questions
//			step, err = conv.Decide(ctx, decisions...)
//		}
//	}
//
// Every method of the step API ends a step as Send does: the history is
// kept before it returns, so the conversation's State between any two
// steps is valid and resumable. A step does no I/O of its own: its effects
// are in the Step it returns, for its driver to perform. It saves nothing
// (Options.Session is Send's), so an engine that keeps the state saves
// State before it makes a step's model call or runs its calls, as Send
// does. It calls no Bedrock API, takes no lock of a Store, writes no log
// and calls no OnEvent (its events are the Step's Events); it reads the
// time from Options.Clock. The hooks it calls (ApprovalPolicy, PrepareTurn,
// RepairCall) must be deterministic for a driver that replays, as a
// Temporal workflow does. The requests are those Send would send, every
// rule applied.
// Conversation.Converse makes a ModelCall's call as Send does (its span
// and metrics), and Conversation.ConverseStream a ModelCall
// whose Stream reports true; a client of the engine's own makes it bare
// (AssembleStream reads a stream's events into a Converse output). In a
// process without the Conversation, CallModel makes the call and
// NewExecutor's Executor runs the calls as the Conversation's would.
type Step struct {
	// ModelCall, if not nil, is the model call to make next; its answer goes
	// to HandleResponse.
	ModelCall *ModelCall
	// CountTokens, if not nil, is a count of a request's input tokens to
	// obtain with Bedrock's CountTokens API (see ContextPolicy.CountTokens);
	// its answer, or the error of the call, goes to HandleCount.
	CountTokens *bedrockruntime.CountTokensInput
	// Calls are the tool calls to run now, already marked started in the
	// conversation's state: a crash from here on answers an unanswered one
	// as interrupted on Resume, never running it again. Run each, keyed by
	// its ID (see tools.CallID), for instance with the Executor of
	// Conversation.Executor, and hand what came of each (Executor.Run's
	// CallResult) to AnswerCalls. A call's Answer, set when it runs again
	// after its question, goes to its tool (Executor.Run does it).
	// A call is in the Calls of one step only: after a batch of results
	// that leaves calls of earlier steps unanswered, they are the step's
	// Waiting. Their results go to the Conversation that handed them out:
	// one restored from the State in the meantime answers them as
	// interrupted (ErrCallInterrupted) on BeginResume, and takes no result
	// for them.
	Calls []Call
	// Waiting are the calls of earlier steps still running, whose results
	// AnswerCalls awaits; the step may wait for nothing else.
	Waiting []Call
	// Pending are the calls awaiting a decision: an approval, or the
	// answer to the Question the call's tool asked. Decide takes one
	// Decision for each. When Calls are set too, run those first.
	Pending []Call
	// Result, if not nil, ends the Send: a final answer.
	Result *Result
	// Events are what the step did, in order, for its driver to report
	// (Send hands them to Options.OnEvent): TurnEnd, Trimmed, ModelFallback,
	// AnswerRejected, Resumed, ApprovalDecided for Decide's decisions,
	// ToolEnd for calls answered without running, Text of a reply given to
	// HandleResponse. The events of the effects are their performers':
	// Conversation.Converse reports Text and ModelRetry, and the Executor
	// ToolStart and ToolEnd, to OnEvent as they happen. A step that fails
	// returns, with its error, a Step holding only its Events, if it has
	// any (the TurnEnd of a reply that ends the run, say).
	Events []Event

	unrun bool         // the final answer asks for tool calls its stop reason leaves unrun, which Send logs
	round *nestedRound // what Options.Budget had spent when the Calls were handed out; nil without one
}

// BudgetLeft is what Options.Budget leaves the step's Calls, as Caller.Budget
// says of the calls of a Send: a Budget for a nested conversation that one of
// them runs (a child workflow, say), or nil without a Budget or Calls. It is
// a *BudgetError when a limit has nothing left: such a conversation should
// not start.
func (s *Step) BudgetLeft() (*Budget, error) {
	if s == nil || s.round == nil {
		return nil, nil
	}
	return s.round.left()
}

// ModelCall is a model call a conversation wants made.
type ModelCall struct {
	// Turn is the model call's number in its Send or Resume, from 1. A
	// summary call has the number of the turn it makes room for.
	Turn int
	// Summary marks the call that summarises the messages a ContextPolicy
	// with Summarize dropped; its answer is not a turn of the conversation.
	Summary bool
	// Input is the request, every rule of the conversation applied: tool
	// configuration, cache points, structured output, trimming.
	Input *bedrockruntime.ConverseInput

	stream   bool // Send makes it with ConverseStream
	mode     types.GuardrailStreamProcessingMode
	estimate int // the input tokens, estimated (see Budget)
}

// Stream reports whether Send would make the call with ConverseStream
// (Options.Stream, when the model streams tool use; never for a summary).
func (r *ModelCall) Stream() bool { return r.stream }

// StreamInput is Input as a ConverseStream request, with the guardrail's
// stream processing mode of Options.Stream.
func (r *ModelCall) StreamInput() *bedrockruntime.ConverseStreamInput {
	return streamRequest(r.Input, r.mode)
}

// ErrStaleStep means an answer to the step API that is not to the last
// Step. It may be a response to a ModelCall that is not the one awaited
// (given twice, say, by an engine that delivers at least once). It may be
// a result for a call that is not awaiting one. It changes nothing, so an engine may drop the
// answer.
var ErrStaleStep = errors.New("not an answer to the last step")

// run is the state of the Send or Resume in progress, under sendMu.
type run struct {
	res       *Result
	await     *ModelCall // the model call the last step asked for, until answered
	turn      int        // the model calls made, summaries aside
	win       window
	shape     *shape
	cfg       *types.ToolConfiguration // the configuration of the turn's request
	retried   bool                     // the turn's request was trimmed after an overflow
	wasted    Usage                    // of the call that overflowed, counted, for the retry's TurnEnd
	wastedUSD dollars                  // what wasted cost
	trim      *pendingTrim             // a trim awaiting its summary
	counted   *tokenCount              // the count of the turn's request, asked for or answered
	asked     bool                     // Options.Approver decided the open turn's calls
	questions map[string]int           // the questions each call asked in this run, by toolUseId
	resumed   bool                     // turn numbers the resumed turn's calls, until the first model call
	plan      *TurnPlan                // Options.PrepareTurn's turn; nil without it
	tried     int                      // the Options.ModelCalls.Fallback tried in this turn

	spent   tally   // what the run spent, from its start, for Budget
	resCost dollars // of the Result's usage: the turns
}

// pendingTrim is a trim waiting for the summary of what it dropped.
type pendingTrim struct {
	tr *trim.History
	ev Trimmed
}

// fail ends the run with err, attempted being what was attempted.
func (r *run) fail(attempted []types.Message, err error) (*Step, error) {
	r.res.History = slices.Clone(attempted)
	return nil, fmt.Errorf("converse: turn %d: %w", r.turn, err)
}

// Begin adds msg, a user message, and starts a Send driven one step at a
// time (see Step): it returns the first model call. The conversation must
// be one SendMessage takes, and the errors before the first call are
// SendMessage's. The run ends with a Step holding a Result, an error, or
// Pending calls that no decision came for (a pause).
func (c *Conversation) Begin(ctx context.Context, msg types.Message) (*Step, error) {
	return stepping(c, false, func() (*Step, error) { return c.begin(ctx, msg, nil) })
}

// BeginStructured is Begin for a structured answer, as StructuredJSON
// asks for one: the requests carry the answer's schema (natively, or as
// the final tool), and a reply that breaks it is sent back for a
// correction, as in a Send. The final step's Result.Text is the answer's
// JSON. A schema it cannot take fails before any model call, as
// CheckSchema says.
func (c *Conversation) BeginStructured(ctx context.Context, msg types.Message, schema json.RawMessage) (*Step, error) {
	tool, err := answerTool(schema)
	if err != nil {
		return nil, err
	}
	return stepping(c, false, func() (*Step, error) {
		sh, err := newShape(tool, c.model, c.tools, &c.opts, c.kept())
		if err != nil {
			return nil, err
		}
		return c.begin(ctx, msg, sh)
	})
}

// BeginResume starts a Resume driven one step at a time: it takes what
// Resume takes and returns the first step, calls to run or a model call.
func (c *Conversation) BeginResume(ctx context.Context, decisions ...Decision) (*Step, error) {
	return stepping(c, false, func() (*Step, error) { return c.beginResume(ctx, decisions) })
}

// HandleResponse takes the answer to req, the ModelCall of the last Step:
// the Converse output, or the error of the call (a stream's events
// assembled into a Converse output by AssembleStream or
// Conversation.ConverseStream, a truncated stream's ErrStreamTruncated
// among the errors). It makes the checks Send
// makes, and returns the next step: calls to run, decisions to take, a
// model call (the next turn, a structured answer's correction, or the
// same turn trimmed after an overflow) or the Result. An error of the
// call, and the stop reasons Send fails on, end the run with an error.
// An answer to any other ModelCall (one answered already, or of an earlier
// step) is ErrStaleStep, and changes nothing.
func (c *Conversation) HandleResponse(ctx context.Context, req *ModelCall, out *bedrockruntime.ConverseOutput, callErr error) (*Step, error) {
	return stepping(c, true, func() (*Step, error) {
		if req == nil || req != c.run.await {
			return nil, fmt.Errorf("converse: HandleResponse: %w: the request is not the one the last step asked for", ErrStaleStep)
		}
		var t *turnResult
		if callErr == nil {
			if t, callErr = replyOf(out); callErr == nil && !req.Summary {
				textEvents(req.Turn, t.message, c.events.emit)
			}
		}
		return c.handleResponse(ctx, req, t, callErr)
	})
}

// AnswerCalls takes what came of calls of the last Step's Calls (see
// CallResult), each paired with its call by toolUseId, and returns the
// next step. Results may come in several batches, each saved as it comes;
// once every call is answered, the results go to the model in one user
// message, with status and media as the model takes them. A call whose
// tool asked a Question instead becomes pending with it, as in a Send: a
// later step lists it in Pending, and Decide's answer hands it out again
// in Calls, with its Answer. The usage a CallResult carries is counted as
// Caller.ReportUsage's is in a Send. A CallResult for no started call awaiting
// one is ErrStaleStep (a result or a question given twice, say); one
// Bedrock would reject (no content, blank text) is an error too, and
// neither is kept.
func (c *Conversation) AnswerCalls(ctx context.Context, results ...CallResult) (*Step, error) {
	return stepping(c, true, func() (*Step, error) {
		history, tail := c.open()
		if tail == nil {
			return nil, fmt.Errorf("converse: AnswerCalls: %w: no calls are open", ErrStaleStep)
		}
		at := make([]int, len(results)) // the call each answers
		for k, r := range results {
			i, err := tail.awaitingResult(r, at[:k])
			if err != nil {
				return nil, fmt.Errorf("converse: AnswerCalls: %w", err)
			}
			at[k] = i
		}
		var run []int
		var blocks []types.ContentBlock
		for k, r := range results {
			if r.reported() {
				c.run.countPriced(c.accounts, r.Usage, r.cost())
			}
			b := r.Result
			if r.Question != nil {
				b = c.run.ask(tail, at[k], &tools.InputRequiredError{Question: *r.Question}) // nil once the call is pending
			}
			if b != nil {
				run, blocks = append(run, at[k]), append(blocks, b)
			}
		}
		return c.keepResults(ctx, history, tail, run, media.Limit(c.exec.withStatus(blocks)))
	})
}

// awaitingResult is the index of the call of t that r answers, a started
// call awaiting its result, taken aside (those of the batch before r). It
// says what Bedrock would reject in r's result, or why r answers no call.
func (t *openTurn) awaitingResult(r CallResult, taken []int) (int, error) {
	id := r.ID
	if r.Question == nil {
		if err := checkResult(r.Result); err != nil {
			return -1, err
		}
		if rid := message.ResultID(r.Result); id != rid {
			return -1, fmt.Errorf("the result of %q answers %q", id, rid)
		}
	}
	i := t.awaiting(id, taken)
	if i < 0 {
		return -1, fmt.Errorf("%w: %q is not a started call awaiting its result", ErrStaleStep, id)
	}
	return i, nil
}

// checkResult says what Bedrock would reject in b, a result handed to
// AnswerCalls: anything but a toolResult block, no content, blank text.
func checkResult(b types.ContentBlock) error {
	r, ok := b.(*types.ContentBlockMemberToolResult)
	if !ok {
		return fmt.Errorf("%T is not a toolResult block", b)
	}
	id := aws.ToString(r.Value.ToolUseId)
	if len(r.Value.Content) == 0 {
		return fmt.Errorf("the result of %q has no content", id)
	}
	for _, c := range r.Value.Content {
		if t, ok := c.(*types.ToolResultContentBlockMemberText); ok && strings.TrimSpace(t.Value) == "" {
			return fmt.Errorf("the result of %q has a blank text block", id)
		}
	}
	return nil
}

// Decide takes one Decision for each of the last Step's Pending calls
// (approvals and denials, and answers to questions, as Resume takes them)
// and returns the next step. A call answered is in its Calls again, with
// its Answer. Decisions that do not fit are ErrDecision, and change nothing.
func (c *Conversation) Decide(ctx context.Context, decisions ...Decision) (*Step, error) {
	return stepping(c, true, func() (*Step, error) {
		history, tail := c.open()
		if tail == nil || !tail.paused() {
			return nil, fmt.Errorf("converse: Decide: %w: %w: no call is pending", ErrStaleStep, ErrDecision)
		}
		byID, err := checkDecisions(tail, decisions)
		if err != nil {
			return nil, fmt.Errorf("converse: Decide: %w", err)
		}
		tail.applyDecisions(ctx, c.exec, c.events.emit, c.run.turn, byID)
		return c.startCalls(ctx, history, tail, nil)
	})
}

// holding runs fn, a driver's (Send, Resume, Stop), with the Send lock and
// the session held (see prepare). Then it reports the events its steps kept
// (see flush) and saves what they left unsaved (see save). The error of a
// failed save is fn's unless fn failed.
func holding[T any](ctx context.Context, c *Conversation, fn func() (T, error)) (T, error) {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.events.collect = c.opts.OnEvent != nil
	var zero T
	if err := c.checkConfig(); err != nil {
		return zero, err
	}
	release, err := holdSession(ctx, c.opts.Session, c.State)
	if err != nil {
		return zero, err
	}
	defer release()
	v, err := fn()
	c.events.flush()
	if serr := (sender{c}).save(ctx); serr != nil && err == nil {
		return v, serr
	}
	return v, err
}

// stepping runs fn, a step of the step API, with the Send lock held; a
// step of a run (cont), only within one begun before. A step saves
// nothing and reports nothing: its driver does, with the Step's Events.
func stepping(c *Conversation, cont bool, fn func() (*Step, error)) (*Step, error) {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	if cont && c.run == nil {
		return nil, errors.New("converse: no Send is under way: Begin or BeginResume first")
	}
	if err := c.checkConfig(); err != nil {
		return nil, err
	}
	c.events.collect, c.events.kept = true, nil
	step, err := fn()
	if len(c.events.kept) > 0 {
		if step == nil {
			step = &Step{}
		}
		step.Events = c.events.take()
	}
	return step, err
}

// open returns the history and a copy of its open turn, which the steps
// fill in.
func (c *Conversation) open() ([]types.Message, *openTurn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tail == nil {
		return c.history, nil
	}
	return c.history, c.tail.clone()
}

// endStep ends a step: history, and the open turn of its last message if
// any, become the conversation's. Then ev, if not nil, is reported, so
// that History holds what it reports. The state is left for the driver to
// save (see save). It is the one place a step boundary is made;
// history is one Bedrock accepts as the start of a request.
func (c *Conversation) endStep(history []types.Message, tail *openTurn, ev Event) {
	c.keep(history, tail)
	if ev != nil {
		c.events.emit(ev)
	}
	c.unsaved = true
	if c.run != nil {
		c.savedTurn = c.run.turn
	}
}

// kept is the conversation's history.
func (c *Conversation) kept() []types.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.history
}

// keep makes history, and the open turn of its last message if any, the
// conversation's; only endStep calls it.
func (c *Conversation) keep(history []types.Message, tail *openTurn) {
	if tail != nil {
		tail = tail.clone() // the steps go on filling in their own
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.history, c.tail = history, tail
}

// count counts the usage of a turn's model call, by model: in the
// Result's usage and cost, and in the run's and the conversation's
// accounts, and returns what it cost.
func (r *run) count(a *accounts, model string, u Usage) dollars {
	d := a.add(dollars{}, model, u)
	r.countPriced(a, u, d)
	return d
}

// countPriced counts u, which cost d, as count does.
func (r *run) countPriced(a *accounts, u Usage, d dollars) {
	r.res.Usage = r.res.Usage.Add(u)
	r.resCost = r.resCost.plus(d)
	r.res.CostUSD = r.resCost.value()
	a.countPriced(&r.spent, u, d)
}
