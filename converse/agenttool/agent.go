package agenttool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"go.opentelemetry.io/otel/trace"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/tools"
)

// ErrInvalidAgent means an Agent that New or NewStructured cannot make a
// tool of.
var ErrInvalidAgent = errors.New("agenttool: invalid agent")

// Agent is the definition of an agent.
type Agent struct {
	// Name is the tool's name, which the calling model uses, and the
	// gen_ai.agent.name of the agent's spans.
	Name string
	// Description tells the calling model what the agent does and what to
	// give it.
	Description string
	// Client and Model are the agent's Bedrock client and model ID.
	Client converse.Client
	Model  string
	// System is the agent's system prompt; empty means none, or that of
	// Options' Request.
	System string
	// Tools are the agent's own tools; nil means none.
	Tools *tools.Registry
	// Limits bound what each call's conversation spends, beside what the
	// caller's Budget has left; 0 limits are none.
	Limits converse.Limits
	// Timeout bounds each call; 0 means the caller's
	// converse.ToolOptions.Timeout (a minute by default), which an agent
	// may well need more than.
	Timeout time.Duration
	// Store keeps each call's conversation, so that a call run again
	// resumes it; nil means the Store of the caller's Options.Session, or
	// none without one.
	Store converse.Store
	// Keep makes each caller keep one conversation with the agent, which
	// its calls continue, one at a time: the agent remembers the caller's
	// earlier tasks and its answers. A call that ends with an answer makes
	// its conversation the kept one. It is kept in the Store as the session
	// "<caller's session ID>.<Name>" (Name alone without a caller's
	// session). Without a Store, it is kept in the tool's memory by the
	// caller's session ID, which the callers without one share. A call that
	// fails leaves the kept one as it was.
	Keep bool
	// Options configure each call's conversation, applied before the
	// agent's own settings: the system prompt, Telemetry.AgentName, Budget
	// and Session, which are set from the fields above.
	Options []func(*converse.Options)
}

// Input is the input of an agent's tool.
type Input struct {
	Task string `json:"task" jsonschema:"the task for the agent, with everything it needs to know: it sees nothing else of the conversation"`
}

// New makes a tool of a: each call runs a conversation of a's with the
// call's task and answers with its final text. A failure of the agent's
// conversation (a Bedrock error, cancellation, its turn limit) is the
// call's error result, which the calling model sees. A Budget that stops
// the conversation is not a failure. The call is then answered with the
// agent's text so far and a note that it was stopped. New fails with ErrInvalidAgent when a lacks a
// Name, a Client or a Model.
func New(a Agent) (*tools.Tool, error) {
	g := &agent{Agent: a}
	return newTool(g, func(ctx context.Context, in Input) (string, error) {
		text, err := g.run(ctx, func(ctx context.Context, conv *converse.Conversation) (*converse.Result, error) {
			return conv.Send(ctx, in.Task)
		})
		if errors.Is(err, converse.ErrBudget) {
			return stopped(text, err), nil
		}
		return text, err
	})
}

// NewStructured makes a tool of a whose input is an In, which the agent
// gets as JSON, and whose output is an Out: the agent's structured answer
// (see converse.Structured). In and Out must be structs or maps with
// string keys. A Budget that stops the agent makes the call's error
// result, with the agent's text so far. A conversation resumed after a
// crash is not asked for the schema again: its answer must still decode as
// an Out.
func NewStructured[In, Out any](a Agent) (*tools.Tool, error) {
	g := &agent{Agent: a}
	return newTool(g, func(ctx context.Context, in In) (Out, error) {
		var out Out
		prompt, err := json.Marshal(in)
		if err != nil {
			return out, fmt.Errorf("agenttool: %s: %w", a.Name, err)
		}
		text, err := g.run(ctx, func(ctx context.Context, conv *converse.Conversation) (*converse.Result, error) {
			_, res, err := converse.Structured[Out](ctx, conv, string(prompt))
			return res, err
		})
		if errors.Is(err, converse.ErrBudget) {
			return out, errors.New(stopped(text, err))
		}
		if err != nil {
			return out, err
		}
		if err := json.Unmarshal([]byte(text), &out); err != nil {
			return out, fmt.Errorf("agenttool: %s: the answer: %w", a.Name, err)
		}
		return out, nil
	})
}

// agent is an Agent made a tool, with the conversations it keeps in
// memory (see Agent.Keep).
type agent struct {
	Agent
	mu     sync.Mutex                 // held by a call of a kept conversation
	memory map[string]*converse.State // the kept conversations without a Store, by caller
}

// newTool checks g and makes its tool, which calls fn.
func newTool[In, Out any](g *agent, fn func(context.Context, In) (Out, error)) (*tools.Tool, error) {
	a := g.Agent
	switch {
	case a.Name == "":
		return nil, fmt.Errorf("%w: no Name", ErrInvalidAgent)
	case a.Client == nil:
		return nil, fmt.Errorf("%w: %s: no Client", ErrInvalidAgent, a.Name)
	case a.Model == "":
		return nil, fmt.Errorf("%w: %s: no Model", ErrInvalidAgent, a.Name)
	}
	return tools.New(a.Name, a.Description, fn, func(o *tools.Options) {
		// A call cut off by a crash resumes its conversation from its Store.
		o.Timeout, o.Resumable = a.Timeout, true
	})
}

// run runs the call's conversation and returns its final text: a saved
// one resumed, or a new one that start starts. A Budget that stops it
// returns its text so far with the *converse.BudgetError.
func (g *agent) run(ctx context.Context, start func(context.Context, *converse.Conversation) (*converse.Result, error)) (string, error) {
	caller := converse.CallerOf(ctx)
	left, err := caller.Budget()
	if err != nil {
		return "", fmt.Errorf("agenttool: %s was not started: %w", g.Name, err)
	}
	if g.Keep { // the calls continue the kept conversation one after another
		g.mu.Lock()
		defer g.mu.Unlock()
	}
	conv, resumed, err := g.conversation(ctx, left)
	if err != nil {
		return "", err
	}
	var res *converse.Result
	if resumed {
		res, err = conv.Resume(ctx, caller.Decisions()...)
	} else {
		res, err = start(ctx, conv)
	}
	if res != nil {
		caller.ReportUsage(res.Usage, res.CostUSD)
	}
	switch {
	case errors.As(err, new(*converse.PausedError)): // the caller pauses with its calls
		return "", fmt.Errorf("agenttool: %s: %w", g.Name, g.pause(ctx, conv, err))
	case errors.Is(err, converse.ErrNothingToResume): // it had finished before the crash
		return lastText(conv.History()), g.keep(ctx, conv)
	case errors.Is(err, converse.ErrBudget):
		text := ""
		if res != nil {
			text = lastText(res.History)
		}
		return text, err
	case err != nil:
		return "", fmt.Errorf("agenttool: %s: %w", g.Name, err)
	}
	return res.Text, g.keep(ctx, conv)
}

// conversation is the call's conversation: the one saved under the call's
// session, restored to be resumed, or a new one, which continues the kept
// one with Agent.Keep.
func (g *agent) conversation(ctx context.Context, left *converse.Budget) (*converse.Conversation, bool, error) {
	sess := g.session(ctx)
	opts := append(slices.Clone(g.Options), func(o *converse.Options) { g.configure(ctx, o, left, sess) })
	if sess != nil {
		st, err := sess.Store.Load(ctx, sess.ID)
		switch {
		case err == nil:
			conv, err := converse.Restore(g.Client, g.Tools, st, opts...)
			if err != nil {
				return nil, false, fmt.Errorf("agenttool: %s: restore %s: %w", g.Name, sess.ID, err)
			}
			return conv, true, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, false, fmt.Errorf("agenttool: %s: load %s: %w", g.Name, sess.ID, err)
		}
	}
	if st := converse.CallerOf(ctx).State(); st != nil {
		conv, err := converse.Restore(g.Client, g.Tools, st, opts...)
		if err != nil {
			return nil, false, fmt.Errorf("agenttool: %s: restore the paused conversation: %w", g.Name, err)
		}
		return conv, true, nil
	}
	st, err := g.kept(ctx)
	if err != nil || st == nil {
		return converse.New(g.Client, g.Model, g.Tools, opts...), false, err
	}
	conv, err := converse.Restore(g.Client, g.Tools, st, opts...)
	if err != nil {
		return nil, false, fmt.Errorf("agenttool: %s: restore the kept conversation: %w", g.Name, err)
	}
	return conv, false, nil
}

// session is where the call's conversation is saved, or nil: the call's
// toolUseId beside the caller's session ID (or the agent's name without
// one), in Agent.Store or the caller's Store.
func (a *Agent) session(ctx context.Context) *converse.Session {
	id := tools.CallID(ctx)
	caller := converse.CallerOf(ctx).Session()
	store, prefix := a.Store, a.Name
	if caller != nil {
		prefix = caller.ID
		if store == nil {
			store = caller.Store
		}
	}
	if store == nil || id == "" {
		return nil
	}
	return &converse.Session{Store: store, ID: prefix + "." + id}
}

// Budget is the Budget of the agent's conversation for a call that its
// caller's Budget leaves left (nil: no Budget): its Send limits and
// WallTime are what is left, its Conversation limits the agent's Limits,
// whose scope is the call. It is nil when neither limits anything. A host
// that runs the agent elsewhere (a Temporal child workflow) sets it so.
func (a *Agent) Budget(left *converse.Budget) *converse.Budget {
	if left == nil && a.Limits == (converse.Limits{}) {
		return nil
	}
	b := &converse.Budget{Conversation: a.Limits}
	if left != nil {
		b.Send, b.WallTime = left.Send, left.WallTime
	}
	return b
}

// configure sets the agent's own settings on o, after Agent.Options.
func (a *Agent) configure(ctx context.Context, o *converse.Options, left *converse.Budget, sess *converse.Session) {
	if a.System != "" {
		o.Request.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: a.System}}
	}
	o.Telemetry.AgentName = a.Name
	// The caller's spans' provider is the agent's, so that its spans join
	// the caller's trace wherever the caller sends it.
	if span := trace.SpanFromContext(ctx); o.Telemetry.TracerProvider == nil && span.SpanContext().IsValid() {
		o.Telemetry.TracerProvider = span.TracerProvider()
	}
	o.Budget = a.Budget(left)
	o.Session = sess
	if o.Approver == nil {
		// The caller's Approver, or its caller's, decides the agent's
		// calls; none pauses the agent and so the caller.
		o.Approver = converse.CallerOf(ctx).Approver()
	}
}

// stopped is the answer of an agent that a Budget stopped: its text so
// far, and why it stopped.
func stopped(text string, err error) string {
	return strings.TrimSpace(text + "\n\n[The agent was stopped before it finished: " + err.Error() + "]")
}

// lastText is the text of the last assistant message of history.
func lastText(history []types.Message) string {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == types.ConversationRoleAssistant {
			return message.Text(history[i])
		}
	}
	return ""
}
