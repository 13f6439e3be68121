package converse

import (
	"maps"
	"math"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// TurnRecord is what a saved conversation keeps of the model call that
// returned one of its assistant messages, and of the tool calls that message
// asked for. A transcript can then show when things happened (converse view).
// A conversation with Options.Session records them as its events happen; calls
// run or decided elsewhere (Executor.Run, a reply given to HandleResponse)
// have no times.
type TurnRecord struct {
	// End is when the reply arrived.
	End time.Time
	// Duration is how long the model call took as the conversation measured
	// it, the SDK's retries included; zero when it did not make the call
	// (HandleResponse).
	Duration   time.Duration
	StopReason types.StopReason
	Usage      Usage
	// Calls are the message's client tool calls, by toolUseId.
	Calls map[string]CallRecord
}

// CallRecord is what a saved conversation keeps of one tool call.
type CallRecord struct {
	// Start and End are when the call started and was answered; zero when
	// it did not run in a conversation with Options.Session (a denied call).
	Start, End time.Time
	// Truncated and Abandoned are those of its ToolEnd event.
	Truncated, Abandoned bool
	// Verdict and By are the decision of a call that needed approval.
	Verdict Verdict
	By      string
}

// records are the TurnRecords of a conversation's assistant messages, by
// the first block of their message: a conversation replaces a message it
// changes (see message.Same). The Conversation's mu guards them with the
// history they key.
type records map[*types.ContentBlock]*TurnRecord

// note notes ev, which happened at now, in the record of the assistant message
// it is about, the last of history. A reply is kept before its TurnEnd, and
// the calls of a round are those of the last message. A TurnEnd of a reply
// that is not kept (it failed the Send) finds a user message last and is not
// recorded.
func (rs *records) note(history []types.Message, ev Event, now time.Time) {
	n := len(history)
	if n == 0 || history[n-1].Role != types.ConversationRoleAssistant || len(history[n-1].Content) == 0 {
		return
	}
	key := &history[n-1].Content[0]
	rec, ok := (*rs)[key]
	if !ok {
		if *rs == nil {
			*rs = records{}
		}
		rec = &TurnRecord{Calls: map[string]CallRecord{}}
		(*rs)[key] = rec
	}
	call := func(id string, f func(*CallRecord)) {
		cr := rec.Calls[id]
		f(&cr)
		rec.Calls[id] = cr
	}
	switch ev := ev.(type) {
	case TurnEnd:
		rec.End, rec.Duration, rec.StopReason, rec.Usage = now, ev.Duration, ev.StopReason, ev.Usage
	case ToolStart:
		call(ev.ID, func(cr *CallRecord) { cr.Start = now })
	case ToolEnd:
		call(ev.ID, func(cr *CallRecord) { cr.End, cr.Truncated, cr.Abandoned = now, ev.Truncated, ev.Abandoned })
	case ApprovalDecided:
		call(ev.Call.ID, func(cr *CallRecord) { cr.Verdict, cr.By = ev.Decision.Verdict, ev.Decision.By })
	}
}

// of are the records of the messages of history, by index; copies.
func (rs records) of(history []types.Message) map[int]TurnRecord {
	if len(rs) == 0 {
		return nil
	}
	out := map[int]TurnRecord{}
	for i, m := range history {
		if len(m.Content) == 0 {
			continue
		}
		if rec, ok := rs[&m.Content[0]]; ok {
			r := *rec
			r.Calls = maps.Clone(rec.Calls)
			out[i] = r
		}
	}
	return out
}

// restore makes recs, by index, the records of the messages of history,
// a restored one.
func (rs *records) restore(history []types.Message, recs map[int]TurnRecord) {
	for i, rec := range recs {
		if i < 0 || i >= len(history) || history[i].Role != types.ConversationRoleAssistant || len(history[i].Content) == 0 {
			continue
		}
		if *rs == nil {
			*rs = records{}
		}
		rec.Calls = maps.Clone(rec.Calls)
		if rec.Calls == nil {
			rec.Calls = map[string]CallRecord{}
		}
		(*rs)[&history[i].Content[0]] = &rec
	}
}

// turnJSON is the JSON form of a TurnRecord, with the index of its message.
type turnJSON struct {
	Message    int              `json:"message"`
	End        *time.Time       `json:"end,omitempty"`
	DurationMs float64          `json:"durationMs,omitempty"`
	StopReason types.StopReason `json:"stopReason,omitempty"`
	Usage      usageJSON        `json:"usage"`
	Calls      []callJSON       `json:"calls,omitempty"`
}

type callJSON struct {
	ID        string     `json:"toolUseId"`
	Start     *time.Time `json:"start,omitempty"`
	End       *time.Time `json:"end,omitempty"`
	Truncated bool       `json:"truncated,omitempty"`
	Abandoned bool       `json:"abandoned,omitempty"`
	Verdict   Verdict    `json:"verdict,omitempty"`
	By        string     `json:"by,omitempty"`
}

// turnsForm is the JSON form of the records, in the order of their
// messages.
func turnsForm(recs map[int]TurnRecord) []turnJSON {
	var out []turnJSON
	for _, i := range slices.Sorted(maps.Keys(recs)) {
		rec := recs[i]
		j := turnJSON{Message: i, End: timeOrNil(rec.End), DurationMs: float64(rec.Duration) / float64(time.Millisecond), StopReason: rec.StopReason, Usage: usageJSON(rec.Usage)}
		for _, id := range slices.Sorted(maps.Keys(rec.Calls)) {
			cr := rec.Calls[id]
			j.Calls = append(j.Calls, callJSON{ID: id, Start: timeOrNil(cr.Start), End: timeOrNil(cr.End), Truncated: cr.Truncated, Abandoned: cr.Abandoned, Verdict: cr.Verdict, By: cr.By})
		}
		out = append(out, j)
	}
	return out
}

// readRecords returns the records of turns of the n messages of a
// history; nil if none.
func readRecords(turns []turnJSON, n int) map[int]TurnRecord {
	var recs map[int]TurnRecord
	for _, j := range turns {
		if j.Message < 0 || j.Message >= n {
			continue
		}
		rec := TurnRecord{Duration: time.Duration(math.Round(j.DurationMs * float64(time.Millisecond))), StopReason: j.StopReason, Usage: Usage(j.Usage), Calls: map[string]CallRecord{}}
		if j.End != nil {
			rec.End = *j.End
		}
		for _, cj := range j.Calls {
			cr := CallRecord{Truncated: cj.Truncated, Abandoned: cj.Abandoned, Verdict: cj.Verdict, By: cj.By}
			if cj.Start != nil {
				cr.Start = *cj.Start
			}
			if cj.End != nil {
				cr.End = *cj.End
			}
			rec.Calls[cj.ID] = cr
		}
		if recs == nil {
			recs = map[int]TurnRecord{}
		}
		recs[j.Message] = rec
	}
	return recs
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
