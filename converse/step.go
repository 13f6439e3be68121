package converse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/citation"
	"github.com/tooluse/bedrock/converse/internal/media"
	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/models"
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
	if s.round == nil {
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

// save is the driver's: it saves the state that steps left unsaved in
// Options.Session, if set, and reports it. Send, Resume and Stop save after
// every step, before its model call or its tool calls are made, so a crash
// loses at most the step in progress. Cancellation does not stop the save:
// what happened must be kept.
func (c sender) save(ctx context.Context) error {
	s := c.opts.Session
	if s == nil || !c.unsaved {
		return nil
	}
	st := c.State()
	if err := s.Store.Save(context.WithoutCancel(ctx), s.ID, st); err != nil {
		return fmt.Errorf("converse: turn %d: save session %q: %w", c.savedTurn, s.ID, err)
	}
	c.mu.Lock()
	c.revision, c.storeData = st.Revision, st.StoreData
	c.mu.Unlock()
	c.unsaved = false
	c.events.observe(StateSaved{SessionID: s.ID, Turn: c.savedTurn, Messages: len(st.Messages), Pending: len(st.Pending)})
	return nil
}

// begin is Begin; sh, if not nil, is the shape a structured Send's answer
// must take.
func (c *Conversation) begin(ctx context.Context, msg types.Message, sh *shape) (*Step, error) {
	if msg.Role == "" {
		msg.Role = types.ConversationRoleUser
	}
	if msg.Role != types.ConversationRoleUser {
		return nil, fmt.Errorf("converse: SendMessage wants a user message, not %q", msg.Role)
	}
	if err := checkContent(msg); err != nil {
		return nil, err
	}
	c.mu.Lock()
	history, tail, stopped := c.history, c.tail, c.stopped
	c.mu.Unlock()
	if err := sendable(history, tail, stopped); err != nil {
		return nil, err
	}
	base := baseOf(history)
	// A document named as one of the history is numbered, as a tool's is:
	// Bedrock rejects a request that holds a name twice.
	msg.Content = media.UniqueNames(base, msg.Content)
	c.run = &run{res: &Result{}, shape: sh, spent: tally{start: c.opts.now()}}
	// The new messages go after the conversation's own, in its spare
	// capacity if it has some: no copy of the history per Send. A failed
	// Send's Result gets a copy of its own, since the next Send writes over
	// that spare capacity. History reads only the kept messages, before that
	// capacity, so it never races with these writes.
	history = append(base, msg)
	if n := len(base); n > 0 && base[n-1].Role == types.ConversationRoleUser { // a stopped task's results
		history = withPrompt(base, msg.Content, c.model)
	}
	c.mu.Lock()
	c.stopped = false // a new task
	c.mu.Unlock()
	c.endStep(history, nil, nil)
	return c.nextTurn(ctx)
}

// checkConfig checks the request template and builds the tool
// configuration, again only when tools were added: a registry only grows,
// and its tools are immutable. The length is read first, so a tool added
// meanwhile makes the next Send build again.
func (c *Conversation) checkConfig() error {
	if err := checkTemplate(&c.opts.Request); err != nil {
		return err
	}
	n := c.tools.Len()
	if n == c.cfgLen {
		return nil
	}
	cfg, err := toolConfig(c.tools, c.opts.ToolChoice)
	if err != nil {
		return err
	}
	if cfg != nil || len(c.opts.SystemTools) > 0 {
		if err := c.opts.checkChoice(c.model, c.modelID, c.opts.ToolChoice); err != nil {
			return err
		}
	}
	c.cfg, c.cfgLen = withSystemTools(cfg, c.opts.ToolChoice, c.opts.SystemTools), n
	return nil
}

// beginResume is BeginResume.
func (c *Conversation) beginResume(ctx context.Context, decisions []Decision) (*Step, error) {
	c.mu.Lock()
	history, tail := c.history, c.tail
	c.mu.Unlock()
	switch {
	case tail != nil:
		tail = tail.clone()
		byID, err := checkDecisions(tail, decisions)
		if err != nil {
			return nil, fmt.Errorf("converse: Resume: %w", err)
		}
		var cut []int // cut off by a crash: never run again, unless their tools resume
		for i := range tail.calls {
			if tail.started && tail.results[i] == nil && !tail.pending[i] && !c.exec.resumes(tail.calls[i]) {
				cut = append(cut, i)
			}
		}
		if tail.turn == 0 {
			tail.turn = turnOf(history)
		}
		// The events of the calls it finishes carry the number of the
		// turn that asked for them; its own model calls count from 1.
		c.run = &run{res: &Result{}, turn: tail.turn, resumed: true, spent: tally{start: c.opts.now()}}
		c.events.emit(Resumed{Messages: len(history), Decisions: len(decisions)})
		tail.applyDecisions(ctx, c.exec, c.events.emit, tail.turn, byID)
		for _, i := range cut {
			tc := tail.calls[i]
			tail.answer(ctx, c.exec, i, toolErrInterrupted, interruptedText)
			c.events.emit(ToolEnd{Turn: tail.turn, ID: tc.id, Name: tc.name, Input: tc.input, Err: ErrCallInterrupted, Status: types.ToolResultStatusError})
		}
		step, err := c.startCalls(ctx, history, tail, nil)
		if err != nil {
			return nil, fmt.Errorf("converse: Resume: %w", errors.Unwrap(err))
		}
		return step, nil
	case len(history) > 0 && history[len(history)-1].Role == types.ConversationRoleUser:
		if len(decisions) > 0 {
			return nil, fmt.Errorf("converse: Resume: %w: no call is pending", ErrDecision)
		}
		c.run = &run{res: &Result{}, spent: tally{start: c.opts.now()}}
		c.mu.Lock()
		c.stopped = false // the stopped task goes on
		c.mu.Unlock()
		c.events.emit(Resumed{Messages: len(history)})
		return c.nextTurn(ctx)
	}
	return nil, fmt.Errorf("converse: %w", ErrNothingToResume)
}

// nextTurn starts the next turn: the history is trimmed to the
// ContextPolicy's limit, which may take a summary call first, and the
// turn's request built.
func (c *Conversation) nextTurn(ctx context.Context) (*Step, error) {
	r := c.run
	if r.resumed {
		r.turn, r.resumed = 0, false
	}
	r.turn++
	r.retried, r.wasted, r.wastedUSD, r.asked, r.plan, r.tried, r.counted = false, Usage{}, dollars{}, false, nil, 0, nil
	history := c.kept()
	// A forced tool choice holds only for the first turn answering a
	// prompt: after the tool results, the model may answer. A structured
	// Send's final tool and its choice are added to the request, for the
	// turn's model (see shape.path).
	r.cfg = c.cfg
	if r.turn > 1 || !message.HoldsPrompt(history[len(history)-1]) {
		r.cfg = unforced(r.cfg)
	}
	r.cfg = coverHistory(r.cfg, history)
	if c.opts.PrepareTurn != nil {
		t, err := c.opts.prepareTurn(ctx, c.modelID, r.turn, r.cfg, history)
		if err == nil && t.Stop {
			r.turn--
			if err := c.stop(ctx, history, nil, byUser); err != nil {
				return c.run.fail(history, err)
			}
			r.res.History = slices.Clone(history)
			return &Step{Result: r.res}, nil
		}
		if err == nil {
			r.plan = t
			r.cfg, err = offered(c.exec, t, r.cfg, history)
		}
		if err != nil {
			return c.run.fail(history, err)
		}
	}
	return c.sizeTurn(ctx)
}

// kept is the conversation's history.
func (c *Conversation) kept() []types.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.history
}

// turnStep is the step of the turn's model call, on the kept history,
// to the turn's model or the fallback model tried now, within the budget.
func (c *Conversation) turnStep(ctx context.Context) (*Step, error) {
	r := c.run
	t := r.plan
	if r.tried == 0 {
		r.tried = c.sticky.from(planned(t, c.modelID), c.opts.now())
	}
	if r.tried > 0 {
		fallback := TurnPlan{ModelID: c.opts.ModelCalls.fallback()[r.tried-1], System: c.opts.Request.System, InferenceConfig: c.opts.Request.InferenceConfig}
		if t != nil {
			fallback = *t
			fallback.ModelID = c.opts.ModelCalls.fallback()[r.tried-1]
		}
		t = &fallback
	}
	m := c.model
	if t != nil && t.ModelID != c.modelID {
		m = models.Parse(t.ModelID)
	}
	in := c.request(c.kept(), r.cfg, r.shape, t, m)
	if t != nil && in.ToolConfig != nil {
		if err := c.opts.checkChoice(m, t.ModelID, in.ToolConfig.ToolChoice); err != nil {
			return c.run.fail(c.kept(), err)
		}
	}
	stream := c.opts.Stream != nil && (in.ToolConfig == nil || m.SupportsStreamingToolUse())
	return c.budgeted(ctx, &ModelCall{Turn: r.turn, Input: in, stream: stream, mode: c.opts.Stream.guardrailMode()})
}

// planned is the model a turn's plan t calls: PrepareTurn's, or else
// model, New's.
func planned(t *TurnPlan, model string) string {
	if t != nil {
		return t.ModelID
	}
	return model
}

// fallbackCooldown is how long turns keep to the fallback model that
// answered before they try their own model again.
const fallbackCooldown = time.Minute

// stickyFallback is the fallback model that last answered for a turn's
// own model: the turns until a cool-down go to it at once, rather than
// each waiting for their own model to fail again.
type stickyFallback struct {
	model string    // the turn's own model
	tried int       // the Options.ModelCalls.Fallback index that answered, from 1
	until time.Time // the end of the cool-down
}

// from is the fallback to start a turn of model with at now: 0 for the
// model itself.
func (s stickyFallback) from(model string, now time.Time) int {
	if s.tried > 0 && s.model == model && now.Before(s.until) {
		return s.tried
	}
	return 0
}

// fallback is the step of the turn's call to the next of
// Options.ModelCalls.Fallback, if err, of the call of req, is one to fall back
// on and one is left; nil otherwise.
func (c *Conversation) fallback(ctx context.Context, req *ModelCall, err error) (*Step, error) {
	r := c.run
	if req.Summary || r.tried >= len(c.opts.ModelCalls.fallback()) || !fallsBack(err) {
		return nil, nil
	}
	r.tried++
	from, to := aws.ToString(req.Input.ModelId), c.opts.ModelCalls.fallback()[r.tried-1]
	c.events.emit(ModelFallback{Turn: r.turn, From: from, To: to, Err: err})
	return c.turnStep(ctx)
}

// fallsBack reports whether a model call's error is one that another
// model may not have: throttling, a model not ready, timed out or stalled,
// the service unavailable; never once a tool of the turn started.
func fallsBack(err error) bool {
	var (
		throttling  *types.ThrottlingException
		notReady    *types.ModelNotReadyException
		unavailable *types.ServiceUnavailableException
		timeout     *types.ModelTimeoutException
		started     startedError
	)
	if errors.As(err, &started) {
		return false
	}
	return errors.As(err, &throttling) || errors.As(err, &notReady) || errors.As(err, &unavailable) ||
		errors.As(err, &timeout) || errors.Is(err, ErrStalled)
}

// handleResponse is HandleResponse, with the answer decoded: a failed
// call is recovered from if it can be (see recover); a reply is accepted,
// classified, and acted on.
func (c *Conversation) handleResponse(ctx context.Context, req *ModelCall, t *turnResult, err error) (*Step, error) {
	c.run.await = nil
	if req.Summary {
		return c.summarized(ctx, aws.ToString(req.Input.ModelId), t, err)
	}
	if step, done, err := c.rescue(ctx, req, t, err); done {
		return step, err
	}
	a := c.accept(ctx, req, t)
	switch a.classify(c.run, c.opts.maxTurns()) {
	case replyFailed:
		c.events.emit(a.turnEnd)
		return c.run.fail(a.attempted, stopError(t.stop, a.reply))
	case replyToCorrect:
		return c.correct(ctx, a.attempted, t.stop, a.turnEnd)
	case replyFinal:
		return c.finalAnswer(ctx, a)
	case replyOverLimit:
		return c.overTurns(ctx, a)
	}
	return c.openRound(ctx, a, t.calls)
}

// rescue handles a failed model call, or a call that overflowed the
// context window: with Options.Context, the history is trimmed and the turn
// asked again; a fallback model is tried; otherwise the run fails. done is
// false when there is a reply to accept.
func (c *Conversation) rescue(ctx context.Context, req *ModelCall, t *turnResult, err error) (step *Step, done bool, _ error) {
	r := c.run
	history := c.kept()
	if c.opts.Context != nil && !r.retried && overflowed(err, t) {
		again := func(ctx context.Context) (*Step, error) { return c.handleResponse(ctx, req, t, err) }
		if step := c.countFirst(history, again); step != nil {
			return step, true, nil
		}
		r.retried = true
		if t != nil {
			// The call that overflowed was billed: counted now, for the
			// budget of the retry and in case it fails, and reported in the
			// retry's TurnEnd.
			r.wasted = t.usage
			r.wastedUSD = r.count(c.accounts, aws.ToString(req.Input.ModelId), t.usage)
		}
		if step, cut, ferr := c.fit(ctx, history, c.overflowLimit(history), true); ferr != nil || cut {
			return step, true, ferr
		}
	}
	if err == nil {
		return nil, false, nil
	}
	if step, ferr := c.fallback(ctx, req, err); step != nil || ferr != nil {
		return step, true, ferr
	}
	if overflowed(err, t) { // Bedrock's ValidationException: say it is the window
		err = fmt.Errorf("%w: %w", ErrContextWindowExceeded, err)
	}
	step, err = c.run.fail(history, err)
	return step, true, err
}

// accepted is a model call's reply as the conversation takes it: echoed
// as Bedrock takes it back, re-encoded for the conversation's model,
// checked against a structured answer's shape.
type accepted struct {
	t         *turnResult
	reply     types.Message
	attempted []types.Message // the history with the reply
	answered  bool            // a structured answer was found in it
	turnEnd   TurnEnd
}

// accept takes the reply of t, the answer to req: it fills in the
// Result, counts the call's usage and makes the turn's TurnEnd.
func (c *Conversation) accept(ctx context.Context, req *ModelCall, t *turnResult) *accepted {
	r := c.run
	history := c.kept()
	if c.opts.Context != nil {
		r.win.record(history, t.usage)
	}
	model := aws.ToString(req.Input.ModelId)
	reply := message.Echo(t.message)
	if model != c.modelID && models.Parse(model).Provider != c.model.Provider {
		reply = reencode([]types.Message{reply}, models.Parse(model), c.model, c.modelID)[0]
	}
	if c.model.RejectsReasoningHistory() {
		reply.Content = slices.DeleteFunc(reply.Content, message.IsReasoning)
	}
	a := &accepted{t: t, reply: reply}
	a.answered = r.shape != nil && r.shape.accept(ctx, &a.reply, t.stop)
	a.attempted = append(history, a.reply)
	res := r.res
	// The text is the model's as it came, blank blocks between cited
	// sentences included, which the history cannot keep; a structured
	// answer's is the answer accept made of the reply.
	said := t.message
	if r.shape != nil {
		said = a.reply
	}
	res.Message, res.Text, res.Citations, res.StopReason = a.reply, message.Text(said), citation.FromMessage(said), t.stop
	res.Turns, res.Response, res.Model = r.turn, t.resp, model
	cost := r.count(c.accounts, model, t.usage).plus(r.wastedUSD)
	// A fallback that answered keeps the next turns until its cool-down;
	// the turn's own model answering ends it.
	c.sticky = stickyFallback{}
	if r.tried > 0 {
		c.sticky = stickyFallback{model: planned(r.plan, c.modelID), tried: r.tried, until: c.opts.now().Add(fallbackCooldown)}
	}
	a.turnEnd = TurnEnd{Turn: r.turn, Model: model, StopReason: t.stop, Usage: t.usage.Add(r.wasted), CostUSD: cost.value(), Duration: t.took, Response: t.resp}
	r.wasted, r.wastedUSD = Usage{}, dollars{}
	return a
}

// replyKind is what a reply asks of the conversation.
type replyKind int

const (
	replyFailed    replyKind = iota // a stop reason that fails the run
	replyToCorrect                  // a structured answer that breaks its schema
	replyFinal                      // a final answer
	replyOverLimit                  // calls past the turn limit
	replyCalls                      // calls to run
)

// classify says what the reply asks for. A tool_use turn with only server
// tool calls, which Bedrock answered itself, leaves the client nothing to
// answer: it is final (an empty user message would be rejected).
func (a *accepted) classify(r *run, maxTurns int) replyKind {
	stop := a.t.stop
	switch {
	case stopError(stop, a.reply) != nil:
		return replyFailed
	case a.answered:
		return replyFinal
	case stop != types.StopReasonToolUse || !message.HasToolUse(a.reply):
		if r.shape != nil {
			return replyToCorrect
		}
		return replyFinal
	case r.turn >= maxTurns:
		return replyOverLimit
	}
	return replyCalls
}

// finalAnswer ends the run with the reply as its answer. The reply is kept
// before TurnEnd (see History).
func (c *Conversation) finalAnswer(ctx context.Context, a *accepted) (*Step, error) {
	r := c.run
	step := &Step{Result: r.res, unrun: !a.answered && a.t.stop != types.StopReasonToolUse && message.HasToolUse(a.reply)}
	kept, final := keepable(a.attempted)
	r.res.History = final
	if r.shape != nil {
		r.shape.fillResult(r.res)
	}
	c.endStep(kept, nil, a.turnEnd)
	if a.answered { // the final tool's call is reported after its turn
		r.shape.traceAnswer(ctx, c.exec, c.events.emit, r.turn)
	}
	return step, nil
}

// overTurns ends the run at the turn limit: the reply is not kept, and
// the task is stopped.
func (c *Conversation) overTurns(ctx context.Context, a *accepted) (*Step, error) {
	c.events.emit(a.turnEnd)
	history := a.attempted[:len(a.attempted)-1]
	if sh := c.run.shape; sh != nil {
		return c.run.fail(a.attempted, sh.failure(a.t.stop, true, c.opts.maxTurns()))
	}
	return c.stopRun(ctx, history, nil, a.attempted, fmt.Errorf("%w (%d model calls): raise Options.MaxTurns", ErrMaxTurns, c.opts.maxTurns()))
}

// openRound opens the tool round of the reply's calls (calls, if the
// stream already read them): repaired if asked, a structured answer's
// final call answered, those that need it pending for a decision, the
// others started.
func (c *Conversation) openRound(ctx context.Context, a *accepted, calls []toolCall) (*Step, error) {
	r := c.run
	if calls == nil {
		calls = toolCalls(a.reply.Content)
	}
	if c.opts.RepairCall != nil {
		calls = repairCalls(ctx, c.opts.RepairCall, c.exec, a.reply, calls) // rewrites the blocks of attempted's reply
	}
	tail := newOpenTurn(c.exec, c.opts.ApprovalPolicy, calls)
	tail.turn = r.turn
	r.shape.answerFinal(ctx, c.exec, c.events.emit, r.turn, tail)
	if tail.paused() && c.opts.Approver != nil {
		// Nothing starts before Options.Approver decides: the approved
		// calls then run with the others.
		c.endStep(a.attempted, tail, a.turnEnd)
		return &Step{Pending: tail.pendingCalls()}, nil
	}
	return c.startCalls(ctx, a.attempted, tail, a.turnEnd)
}

// startCalls marks the calls of tail that can run (not answered, not
// pending) started, ends the step, and returns them to run; with none, the
// round is closed if every call is answered, or paused.
func (c *Conversation) startCalls(ctx context.Context, history []types.Message, tail *openTurn, ev Event) (*Step, error) {
	var calls, waiting []Call
	if tail.handed == nil {
		tail.handed = make([]bool, len(tail.calls))
	}
	for i := range tail.calls {
		switch {
		case tail.results[i] != nil || tail.pending[i]:
		case tail.handed[i]:
			waiting = append(waiting, tail.handedCall(i))
		default:
			calls = append(calls, tail.handedCall(i))
			tail.handed[i] = true
		}
	}
	if unanswered(tail) == 0 {
		if ev != nil { // the reply's calls are all answered already
			c.endStep(history, tail, ev)
		}
		return c.closeRound(ctx, history, tail)
	}
	if len(calls) > 0 && !tail.started {
		// The round's calls count before it starts, those pending with the
		// rest, so that no decision can pass a limit in the middle of it.
		if err := c.accounts.startRound(&c.run.spent, unanswered(tail)); err != nil {
			c.endStep(history, tail, ev)
			return c.stopRun(ctx, history, tail, nil, err)
		}
	}
	if len(calls) > 0 {
		tail.started = true
	}
	c.endStep(history, tail, ev)
	step := &Step{Calls: calls, Waiting: waiting}
	if len(calls) > 0 && c.opts.Budget != nil {
		step.round = c.run.nested(c.accounts, &c.opts)
	}
	if tail.paused() {
		step.Pending = tail.pendingCalls()
	}
	return step, nil
}

// handedCall is the call i of t as a Step hands it out, with the answer
// to the question it asked, if any.
func (t *openTurn) handedCall(i int) Call {
	c := t.calls[i].public()
	c.Answer = t.answers[i]
	return c
}

// keepResults keeps the results of the calls of tail at the indexes run,
// and closes the round when every call is answered.
func (c *Conversation) keepResults(ctx context.Context, history []types.Message, tail *openTurn, run []int, results []types.ContentBlock) (*Step, error) {
	for k, i := range run {
		tail.results[i] = results[k]
	}
	if slices.Contains(tail.results, nil) {
		return c.startCalls(ctx, history, tail, nil)
	}
	return c.closeRound(ctx, history, tail)
}

// closeRound sends the results of an open turn, all answered, in one user
// message, and starts the next turn.
func (c *Conversation) closeRound(ctx context.Context, history []types.Message, tail *openTurn) (*Step, error) {
	history = append(history, tail.message(history))
	c.endStep(history, nil, nil)
	if err := ctx.Err(); err != nil {
		return c.run.fail(history, err)
	}
	return c.nextTurn(ctx)
}

// keepable is what a history ending with a final answer keeps, and what
// the Result shows. The client's toolUse blocks of a final answer (a turn
// that did not end in tool_use) are dropped, as nothing answers them. A
// server tool's blocks stay, answered in the message. A final answer left
// with no content, or reasoning alone, is not kept. Bedrock rejects empty
// messages, and newer Claude models reject an assistant message of
// reasoning alone, as a prefill. The prompt it answered is not kept
// either, so that the caller can send another. After tool results the
// conversation stays interrupted.
func keepable(history []types.Message) (kept, final []types.Message) {
	last := &history[len(history)-1]
	if message.HasToolUse(*last) {
		answer := types.Message{Role: last.Role}
		for _, b := range last.Content {
			if !message.ClientCall(b) {
				answer.Content = append(answer.Content, b)
			}
		}
		// A copy: the attempt stays as the model sent it, to be checked
		// again (a structured Send's correction) or reported on error.
		history = append(slices.Clip(history[:len(history)-1]), answer)
		last = &history[len(history)-1]
	}
	kept = history
	if slices.IndexFunc(last.Content, notReasoning) < 0 { // empty, or reasoning alone
		kept = history[:len(history)-1]
		if !message.AnswersTools(kept[len(kept)-1]) {
			kept = kept[:len(kept)-1]
		}
	}
	if len(kept) < len(history) {
		return kept, slices.Clone(history) // the next Send writes over what was dropped
	}
	return kept, slices.Clip(history)
}

func notReasoning(b types.ContentBlock) bool { return !message.IsReasoning(b) }

// replyOf reads a Converse output.
func replyOf(out *bedrockruntime.ConverseOutput) (*turnResult, error) {
	if out == nil {
		return nil, errors.New("the response holds no message")
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return nil, errors.New("the response holds no message")
	}
	return &turnResult{message: msg.Value, stop: out.StopReason, usage: usageOf(out.Usage), resp: responseOf(out)}, nil
}

// withStatus returns results with the status field as the executor sends
// it: an engine may have run the calls with other settings.
func (e *Executor) withStatus(results []types.ContentBlock) []types.ContentBlock {
	if e.sendsStatus() {
		return results
	}
	out := make([]types.ContentBlock, len(results))
	for i, b := range results {
		if r, ok := b.(*types.ContentBlockMemberToolResult); ok && r.Value.Status != "" {
			v := r.Value
			v.Status = ""
			b = &types.ContentBlockMemberToolResult{Value: v}
		}
		out[i] = b
	}
	return out
}

// CallResult is what came of a call of a Step that Executor.Run ran, for
// AnswerCalls: its toolResult block, or the Question its tool asked
// instead, and the usage of the model calls made for it.
type CallResult struct {
	// ID is the call's toolUseId.
	ID string
	// Result is the call's toolResult block
	// (*types.ContentBlockMemberToolResult); nil when Question is set.
	Result types.ContentBlock
	// Question, if not nil, is what the call's tool asked the user (see
	// tools.InputRequiredError): the call waits for the answer, and then
	// runs again with it.
	Question *tools.Question
	// Usage is what the call's tool reported with Caller.ReportUsage (a nested
	// conversation's usage, say), summed.
	Usage Usage
	// CostUSD is what Usage cost; nil when a report's cost is unknown, or
	// nothing was reported.
	CostUSD *float64
}

// reported reports whether r carries usage to count.
func (r CallResult) reported() bool { return r.Usage != (Usage{}) || r.CostUSD != nil }

// cost is r's CostUSD as the accounts count it.
func (r CallResult) cost() dollars {
	if r.CostUSD == nil {
		return dollars{unknown: true}
	}
	return dollars{usd: *r.CostUSD}
}

// Run runs one call, as Execute runs the calls of a message, for an engine
// that runs each call of a Step on its own. It returns the call's
// toolResult block, or the Question its tool asked (a
// *tools.InputRequiredError). Either comes with the usage its tool
// reported (see Caller.ReportUsage). A call's Answer reaches its tool through tools.AnswerOf.
// In Run, the Caller has no Budget and no Session.
func (e *Executor) Run(ctx context.Context, call Call) CallResult {
	tc := toolCall{id: call.ID, name: call.Tool, input: call.Input, answer: call.Answer}
	if len(tc.input) == 0 {
		tc.input = []byte("{}")
	}
	n := &nestedRound{a: &accounts{}}
	results, pauses := e.executeAsking(context.WithValue(ctx, nestedKey{}, n), 0, []toolCall{tc}, nil)
	// A report after this, of a call abandoned at its timeout, counts nowhere.
	u, d := n.usage()
	out := CallResult{ID: call.ID, Result: results[0], Usage: u}
	var asks *tools.InputRequiredError
	switch {
	case errors.As(pauses[0], &asks):
		out.Question = &asks.Question
	case pauses[0] != nil:
		// A nested conversation paused: the step API cannot pause it (see
		// package agenttool), so the call's answer is the error.
		out.Result = e.finish(0, tc, outcome{err: pauses[0]})
	}
	if u != (Usage{}) || d.usd != 0 {
		out.CostUSD = d.value()
	}
	return out
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

// Executor returns the Executor the conversation runs its calls with: its
// registry and Options.Tools, with the status field and media rules of its
// model, its telemetry and its events. An engine driving the steps runs a
// Step's Calls with it (Executor.Run), in any process that builds the
// conversation with the same model, registry and options.
func (c *Conversation) Executor() *Executor { return c.exec }
