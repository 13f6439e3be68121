package converse

import (
	"encoding/json"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// Event is something that happened in a conversation, handed to
// Options.OnEvent. It is one of Text, ToolStart, ToolEnd, TurnEnd,
// StreamFallback, ModelFallback, ModelRetry, Hedged, ApprovalRequested, ApprovalDecided,
// Resumed, StateSaved, Trimmed and AnswerRejected. Calls to OnEvent are
// never concurrent, and come in the order the things happened.
type Event interface{ event() }

// Text is assistant text. Without streaming it is the whole text of one text
// or citationsContent block; with streaming it is each delta as it arrives.
type Text struct {
	Turn int
	Text string
}

// ToolStart is a tool call about to run.
type ToolStart struct {
	Turn  int
	ID    string // toolUseId
	Name  string
	Input json.RawMessage
}

// ToolEnd is a tool call that has been answered, successfully or not.
type ToolEnd struct {
	Turn     int
	ID       string // toolUseId
	Name     string
	Input    json.RawMessage
	Output   json.RawMessage // the JSON output, whole; nil when Err is set or a tools.Result has media only
	Media    []MediaInfo     // the images and documents of a tools.Result, without their bytes
	Err      error           // why the call failed; see ErrUnknownTool and friends
	Status   types.ToolResultStatus
	Duration time.Duration
	// Truncated reports that the output (or error text) was longer than the
	// call's output limit (see Executor.MaxOutput) and was cut in the
	// result sent to the model.
	Truncated bool
	// Abandoned reports that the call was answered (timed out or cancelled)
	// while its tool still runs, ignoring its context; it holds its
	// concurrency slot until it returns (see Executor.Abandoned).
	Abandoned bool
}

// TurnEnd is a model call that has completed.
type TurnEnd struct {
	Turn       int
	Model      string // the model that answered: New's, PrepareTurn's or a fallback
	StopReason types.StopReason
	Usage      Usage
	// CostUSD is what Usage cost, at Options.Prices or the price table, as
	// Result.CostUSD counts it; nil when the model's prices are unknown.
	CostUSD *float64
	// Duration is how long the model call took, the SDK's retries included,
	// as the conversation measured it; zero for a reply given to
	// HandleResponse. Response.Metrics holds Bedrock's own measure.
	Duration time.Duration
	Response // the call's trace, metrics and service tier
}

// StreamFallback reports that a streaming conversation made a turn with
// Converse instead of ConverseStream, because the model does not support
// tool use while streaming.
type StreamFallback struct {
	Turn   int
	Reason string
}

func (Text) event()           {}
func (ToolStart) event()      {}
func (ToolEnd) event()        {}
func (TurnEnd) event()        {}
func (StreamFallback) event() {}

// ModelFallback reports that a turn's model call to From failed with Err,
// one of the errors of Options.ModelCalls.Fallback, and that the turn is tried
// with To.
type ModelFallback struct {
	Turn     int
	From, To string
	Err      error
}

func (ModelFallback) event() {}

// ModelRetry reports that a turn's model call to Model failed with Err, a
// stall (ErrStalled) or a stream cut, before anything of its turn took effect.
// It is made again after Wait, as the Retry-th retry (from 1) of
// Options.ModelCalls' Retries. Superseded is the text of the failed call
// already reported in Text events, which the retry's text replaces: a terminal
// or UI that showed it redraws from there.
type ModelRetry struct {
	Turn       int
	Model      string
	Retry      int
	Err        error
	Wait       time.Duration
	Superseded string
}

// Hedged reports that a turn's model call to Model had no first content after
// After, the hedge's quantile of recent first-token times (see
// CallPolicy.Hedge). The call was sent a second time. The first of the two
// requests to get its first content answers, the other is cancelled.
type Hedged struct {
	Turn  int
	Model string
	After time.Duration
}

func (ModelRetry) event() {}
func (Hedged) event()     {}

// ApprovalRequested is a call that needs approval, or an answer to its
// Question, about to be handed to Options.Approver.
type ApprovalRequested struct {
	Turn int
	Call Call
}

// ApprovalDecided is the decision on a call that needed approval (or the
// answer to its Question), by Options.Approver or by Resume (Turn is then
// the turn that asked for the call; see Conversation.Resume).
type ApprovalDecided struct {
	Turn     int
	Call     Call
	Decision Decision
}

// Resumed is a Resume starting: Messages is the length of the history it
// continues, Decisions the number of decisions it was given.
type Resumed struct {
	Messages  int
	Decisions int
}

// StateSaved is the conversation's state saved in Options.Session at a step
// boundary, after the turn's model call or tool round. For a round Resume
// finishes, the turn is the one that asked for its calls. The state is
// Messages messages with Pending calls awaiting approval. A step is saved, and
// reported, once: a pause that ran and decided nothing after the model call is
// not saved again.
type StateSaved struct {
	SessionID string
	Turn      int
	Messages  int
	Pending   int
}

func (ApprovalRequested) event() {}
func (ApprovalDecided) event()   {}
func (Resumed) event()           {}
func (StateSaved) event()        {}
