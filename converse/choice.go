package converse

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/models"
)

// ErrToolChoice means Options.ToolChoice forces tool use (any, or a named
// tool) where Bedrock would reject it. That is on a model without that
// toolChoice (only Claude 3 and later and Amazon Nova take both, Mistral Large
// takes any). It is also with Claude's extended thinking enabled in
// Options.Request.AdditionalModelRequestFields. The Send fails before any
// model call.
var ErrToolChoice = errors.New("unsupported tool choice")

// finalInstruction tells a model that cannot be forced to call the final
// tool of a structured Send to answer with it.
const finalInstruction = "Give your final answer only by calling the tool %s, with the answer as its input; do not answer in text."

// checkChoice returns an ErrToolChoice for a forcing choice that the
// model m, named id, or the thinking configuration of Request, rejects.
func (o *Options) checkChoice(m models.Model, id string, choice types.ToolChoice) error {
	var name string
	var ok bool
	switch choice.(type) {
	case *types.ToolChoiceMemberAny:
		name, ok = "any", m.ToolChoice().Any
	case *types.ToolChoiceMemberTool:
		name, ok = "tool", m.ToolChoice().Tool
	default:
		return nil
	}
	if !ok {
		return fmt.Errorf("converse: %w: model %s does not support toolChoice %s", ErrToolChoice, id, name)
	}
	if o.thinks(m) {
		return fmt.Errorf("converse: %w: model %s does not take toolChoice %s, which forces tool use, with extended thinking enabled (Options.Request.AdditionalModelRequestFields); leave Options.ToolChoice nil or auto", ErrToolChoice, id, name)
	}
	return nil
}

// thinks reports whether the request fields turn on an extended thinking
// that rules out a forced tool choice on the model m.
func (o *Options) thinks(m models.Model) bool {
	d := o.Request.AdditionalModelRequestFields
	if d == nil {
		return false
	}
	b, err := d.MarshalSmithyDocument()
	return err == nil && m.ThinkingForbidsForcing(b)
}
