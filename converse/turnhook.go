package converse

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/models"
)

// TurnPlan is what Options.PrepareTurn may change of one turn's model call,
// for that call only. Its fields start as the conversation would send
// them; assign new values rather than changing the ones given in place,
// which are shared with Options.Request and the history.
type TurnPlan struct {
	// Number is the turn's number in its Send or Resume, from 1.
	Number int
	// History is the history the call sends, to be read only.
	History []types.Message
	// Answered are the calls whose results the last message of History
	// sends, in order: none on a turn that answers a prompt.
	Answered []Call
	// ModelID is the model to call (New's by default); Options.ModelCalls.Fallback
	// are tried after it.
	ModelID string
	// Offered names the registry's tools to offer; nil offers all of
	// them. A tool the history calls stays described (as withdrawn, if it
	// is not offered), as Bedrock requires.
	Offered []string
	// ToolChoice is the call's tool choice (Options.ToolChoice on the first
	// turn answering a prompt). A forcing choice the model called rejects,
	// or one naming a tool not offered, fails the Send with ErrToolChoice.
	ToolChoice types.ToolChoice
	// System and InferenceConfig are the call's system prompt and
	// inference settings (Options.Request's by default).
	System          []types.SystemContentBlock
	InferenceConfig *types.InferenceConfiguration
	// Stop ends the Send before this call: its Result is that of the last
	// turn made (StopReason tool_use after a tool round), and the task is
	// stopped (see Conversation.Stop). The next Send adds its prompt after
	// the tool results; Resume instead makes this call.
	Stop bool
}

// prepareTurn runs PrepareTurn for the turn numbered turn, to the model
// modelID (New's), on history and cfg, the configuration the turn would
// send; it returns the turn as the hook left it.
func (o *Options) prepareTurn(ctx context.Context, modelID string, turn int, cfg *types.ToolConfiguration, history []types.Message) (*TurnPlan, error) {
	t := &TurnPlan{Number: turn, History: history, ModelID: modelID, System: o.Request.System, InferenceConfig: o.Request.InferenceConfig}
	if cfg != nil {
		t.ToolChoice = cfg.ToolChoice
	}
	if n := len(history); n > 1 && message.AnswersTools(history[n-1]) && !message.HoldsPrompt(history[n-1]) {
		for _, tc := range toolCalls(history[n-2].Content) {
			t.Answered = append(t.Answered, tc.public())
		}
	}
	if err := o.PrepareTurn(ctx, t); err != nil {
		return nil, fmt.Errorf("prepare turn: %w", err)
	}
	if t.ModelID == "" {
		return nil, errors.New("prepare turn: the turn has no ModelID")
	}
	return t, nil
}

// offered is the configuration of a turn whose hook chose t.Offered and
// t.ToolChoice. It is cfg without the registry's tools not chosen, with the
// tools the history calls described, and t's choice. System tools stay. A
// structured Send's final tool is added after it, for the model the hook
// picked. The registry's tools are those exec runs.
func offered(exec *Executor, t *TurnPlan, cfg *types.ToolConfiguration, history []types.Message) (*types.ToolConfiguration, error) {
	if t.Offered != nil {
		for _, name := range t.Offered {
			if _, ok := exec.lookup(name); !ok {
				return nil, fmt.Errorf("prepare turn: %w %q; available tools: %s", ErrUnknownTool, name, exec.available())
			}
		}
		var keep []types.Tool
		if cfg != nil {
			for _, tool := range cfg.Tools {
				spec, ok := tool.(*types.ToolMemberToolSpec)
				if ok {
					name := aws.ToString(spec.Value.Name)
					if _, reg := exec.lookup(name); reg && !slices.Contains(t.Offered, name) {
						continue
					}
				}
				keep = append(keep, tool)
			}
		}
		cfg = nil
		if len(keep) > 0 {
			cfg = &types.ToolConfiguration{Tools: keep}
		}
		cfg = cover(cfg, history)
	}
	if cfg == nil {
		if t.ToolChoice != nil {
			return nil, fmt.Errorf("converse: %w: prepare turn: a tool choice with no tools offered", ErrToolChoice)
		}
		return nil, nil
	}
	if named, ok := t.ToolChoice.(*types.ToolChoiceMemberTool); ok && !offers(cfg, aws.ToString(named.Value.Name)) {
		return nil, fmt.Errorf("converse: %w: prepare turn: toolChoice names %q, which is not offered", ErrToolChoice, aws.ToString(named.Value.Name))
	}
	if cfg.ToolChoice != t.ToolChoice {
		cfg = &types.ToolConfiguration{Tools: cfg.Tools, ToolChoice: t.ToolChoice}
	}
	return cfg, nil
}

// reencode is history as the model to takes it, written by a conversation with
// the model from. The status field is left out of tool results where to
// rejects it. The reasoning blocks of another provider are dropped. The media
// of tool results that to takes none of are replaced by text. Messages that
// change are copies; the others are history's.
func reencode(history []types.Message, from, to models.Model, toID string) []types.Message {
	status, reasoning, media := !to.SupportsToolStatus(), from.Provider != to.Provider, to.ToolResultMedia()
	out, copied := history, false
	for i, msg := range history {
		var content []types.ContentBlock
		for k, b := range msg.Content {
			nb, drop := reencodeBlock(b, status, reasoning, media, toID)
			if nb == b && !drop && content == nil {
				continue
			}
			if content == nil {
				content = slices.Clone(msg.Content[:k])
			}
			if !drop {
				content = append(content, nb)
			}
		}
		if len(content) == 0 {
			continue // unchanged, or nothing left: keep it as it was
		}
		if !copied {
			out, copied = slices.Clone(history), true
		}
		out[i] = types.Message{Role: msg.Role, Content: content}
	}
	return out
}

// reencodeBlock is b as reencode sends it, or drop.
func reencodeBlock(b types.ContentBlock, status, reasoning bool, media models.Media, toID string) (nb types.ContentBlock, drop bool) {
	switch v := b.(type) {
	case *types.ContentBlockMemberReasoningContent:
		return b, reasoning
	case *types.ContentBlockMemberToolResult:
		r := v.Value
		changed, cloned := status && r.Status != "", false
		if changed {
			r.Status = ""
		}
		for k, rc := range r.Content {
			what := ""
			switch rc.(type) {
			case *types.ToolResultContentBlockMemberImage:
				if !media.Images {
					what = "image"
				}
			case *types.ToolResultContentBlockMemberDocument:
				if !media.Documents {
					what = "document"
				}
			}
			if what == "" {
				continue
			}
			if !cloned {
				r.Content, cloned = slices.Clone(r.Content), true
			}
			changed = true
			r.Content[k] = &types.ToolResultContentBlockMemberText{Value: fmt.Sprintf("[%s left out: model %s takes no %ss in tool results]", what, toID, what)}
		}
		if changed {
			return &types.ContentBlockMemberToolResult{Value: r}, false
		}
	}
	return b, false
}
