package converse

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"weak"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/models"
	"github.com/tooluse/bedrock/converse/internal/wire"
	"github.com/tooluse/bedrock/tools"
)

// ToolConfig describes the Executor's tools to the model, for a Converse
// request made by hand: one tool spec per tool of its Registry, in
// registration order, with its input schema as a JSON document. choice may
// be nil (the model decides), or one of &types.ToolChoiceMemberAuto,
// &types.ToolChoiceMemberAny and &types.ToolChoiceMemberTool (a named tool).
// An empty or nil registry gives nil: Bedrock rejects a toolConfig with no
// tools. The configuration is the caller's. But each tool's spec in it is made
// once for as long as the tool lives, shared by every configuration and
// request offering the tool. Replace a spec, do not change it.
func (e *Executor) ToolConfig(choice types.ToolChoice) (*types.ToolConfiguration, error) {
	return toolConfig(e.Registry, choice)
}

// toolConfig is Executor.ToolConfig for the tools of reg.
func toolConfig(reg *tools.Registry, choice types.ToolChoice) (*types.ToolConfiguration, error) {
	if reg == nil || reg.Len() == 0 {
		return nil, nil
	}
	ts := reg.Tools()
	cfg := &types.ToolConfiguration{Tools: make([]types.Tool, 0, len(ts)), ToolChoice: choice}
	for _, t := range ts {
		spec, err := toolSpec(t)
		if err != nil {
			return nil, err
		}
		cfg.Tools = append(cfg.Tools, spec)
	}
	if tc, ok := choice.(*types.ToolChoiceMemberTool); ok {
		if _, found := reg.Lookup(aws.ToString(tc.Value.Name)); !found {
			return nil, fmt.Errorf("converse: tool choice names %q, which is not in the registry", aws.ToString(tc.Value.Name))
		}
	}
	return cfg, nil
}

// specs holds each tool's spec (a Tool is immutable) for as long as the tool
// lives. Conversations offering the same tools then describe them once, as a
// program writing its tool configuration by hand does. A spec is shared, never
// changed.
var specs sync.Map // weak.Pointer[tools.Tool] -> types.Tool

// toolSpec describes t to the model (see newToolSpec), made once a tool.
func toolSpec(t *tools.Tool) (types.Tool, error) {
	key := weak.Make(t)
	if spec, ok := specs.Load(key); ok {
		return spec.(types.Tool), nil
	}
	spec, err := newToolSpec(t)
	if err != nil {
		return nil, err
	}
	if _, loaded := specs.LoadOrStore(key, spec); !loaded {
		runtime.AddCleanup(t, func(key weak.Pointer[tools.Tool]) { specs.Delete(key) }, key)
	}
	return spec, nil
}

// newToolSpec describes t to the model. A strict tool (tools.Options.Strict)
// says so, with its input schema as Bedrock takes one of a strict tool
// (models.StrictSchema). The others leave the field out and their schema as it
// is. Calls are validated against the tool's whole schema.
func newToolSpec(t *tools.Tool) (types.Tool, error) {
	var schema map[string]any
	if err := json.Unmarshal(t.InputSchema(), &schema); err != nil {
		return nil, fmt.Errorf("converse: tool %q: input schema: %w", t.Name(), err)
	}
	if t.Strict() {
		if err := models.StrictSchema(schema); err != nil {
			return nil, fmt.Errorf("converse: strict tool %q: input schema: %w", t.Name(), err)
		}
	}
	spec := types.ToolSpecification{
		Name:        aws.String(t.Name()),
		Description: aws.String(t.Description()),
		InputSchema: &types.ToolInputSchemaMemberJson{Value: wire.Encoded(document.NewLazyDocument(schema))},
	}
	if t.Strict() {
		spec.Strict = aws.Bool(true)
	}
	return &types.ToolMemberToolSpec{Value: spec}, nil
}

// withSystemTools adds Bedrock's server-side system tools named in names
// (Options.SystemTools) to cfg, which may be nil when the registry is
// empty: system tools alone make a tool configuration too.
func withSystemTools(cfg *types.ToolConfiguration, choice types.ToolChoice, names []string) *types.ToolConfiguration {
	if len(names) == 0 {
		return cfg
	}
	out := &types.ToolConfiguration{ToolChoice: choice}
	if cfg != nil {
		out.Tools = append(out.Tools, cfg.Tools...)
	}
	for _, name := range names {
		out.Tools = append(out.Tools, &types.ToolMemberSystemTool{Value: types.SystemTool{Name: aws.String(name)}})
	}
	return out
}

// withdrawnDescription describes a tool that the history calls but the
// conversation no longer offers.
const withdrawnDescription = "No longer offered: do not call it. It appears only because earlier messages call it."

// coverHistory returns cfg, or, when cfg is nil and history holds toolUse
// blocks, a configuration describing the tools they call as withdrawn, with an
// empty object schema. Bedrock requires a toolConfig on every request whose
// history holds tool blocks. A kept history may call tools no longer offered:
// the final tool of a structured Send (whose rejected calls stay, answered),
// or the tools of a conversation restored without them. Bedrock asks only that
// a toolConfig be there, not that it name every tool the history calls. A call
// of an unknown tool is answered and sent back with the other tools. So an
// offered configuration is left as it is. A call of a withdrawn tool is
// answered as one of an unknown tool.
func coverHistory(cfg *types.ToolConfiguration, history []types.Message) *types.ToolConfiguration {
	if cfg != nil {
		return cfg
	}
	return cover(nil, history)
}

// cover is cfg with a withdrawn tool's spec added for each tool the
// history calls that cfg does not offer; cfg itself is not changed.
func cover(cfg *types.ToolConfiguration, history []types.Message) *types.ToolConfiguration {
	copied := false
	for _, m := range history {
		for _, b := range m.Content {
			tu, ok := b.(*types.ContentBlockMemberToolUse)
			if !ok || offers(cfg, aws.ToString(tu.Value.Name)) {
				continue
			}
			if !copied {
				cfg, copied = copyConfig(cfg), true
			}
			cfg.Tools = append(cfg.Tools, &types.ToolMemberToolSpec{Value: types.ToolSpecification{
				Name:        tu.Value.Name,
				Description: aws.String(withdrawnDescription),
				InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(map[string]any{"type": "object", "properties": map[string]any{}})},
			}})
		}
	}
	return cfg
}

// offers reports whether cfg has a tool spec named name.
func offers(cfg *types.ToolConfiguration, name string) bool {
	return cfg != nil && slices.ContainsFunc(cfg.Tools, func(t types.Tool) bool {
		spec, ok := t.(*types.ToolMemberToolSpec)
		return ok && aws.ToString(spec.Value.Name) == name
	})
}

// copyConfig is a copy of cfg, which may be nil, to add tools to.
func copyConfig(cfg *types.ToolConfiguration) *types.ToolConfiguration {
	if cfg == nil {
		return &types.ToolConfiguration{}
	}
	return &types.ToolConfiguration{Tools: slices.Clone(cfg.Tools), ToolChoice: cfg.ToolChoice}
}
