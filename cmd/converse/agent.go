package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/agenttool"
	"github.com/tooluse/bedrock/tools"
)

// defaultAgentTimeout bounds a manifest agent's call when it sets no
// timeout: a task of several model calls and tools.
const defaultAgentTimeout = 5 * time.Minute

// isAgent reports whether the entry is of kind agent: a model of its own.
func (mt manifestTool) isAgent() bool { return mt.Model != "" }

// agent makes the tool of an entry of kind agent. Its tools are named:
// built-ins (unless -no-builtins: builtins is false) and the entries before
// it, made already.
func (mt manifestTool) agent(made []*tools.Tool, builtins bool, fns *functions) (*tools.Tool, error) {
	if err := mt.checkAgent(); err != nil {
		return nil, err
	}
	if fns == nil {
		return nil, errors.New("agents need the Bedrock client, which this run does not have")
	}
	timeout := defaultAgentTimeout
	if mt.Timeout != "" {
		d, err := time.ParseDuration(mt.Timeout)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("timeout %q: want a positive Go duration such as 5m", mt.Timeout)
		}
		timeout = d
	}
	reg, err := agentTools(mt.Tools, made, builtins)
	if err != nil {
		return nil, err
	}
	return agenttool.New(agenttool.Agent{Name: mt.Name, Description: mt.Description, Client: &fns.bedrock,
		Model: mt.Model, System: mt.System, Tools: reg, Timeout: timeout})
}

// checkAgent checks that an agent's entry has only the fields of its kind.
func (mt manifestTool) checkAgent() error {
	switch {
	case mt.Description == "":
		return errors.New("empty description")
	case len(mt.Command) > 0 || mt.Lambda != "":
		return errors.New(`"model" with "command" or "lambda": an entry is an agent, a program or a function`)
	case len(mt.InputSchema) > 0 || len(mt.Env) > 0 || len(mt.InheritEnv) > 0 || mt.Qualifier != "" || mt.Approve:
		return errors.New(`an agent takes "model", "system", "tools" and "timeout"; its input is {"task": "..."}`)
	}
	return nil
}

// agentTools is the registry of the tools names name: entries made before
// the agent, or built-ins.
func agentTools(names []string, made []*tools.Tool, builtins bool) (*tools.Registry, error) {
	var ts []*tools.Tool
	for _, name := range names {
		i := slices.IndexFunc(made, func(t *tools.Tool) bool { return t.Name() == name })
		switch {
		case i >= 0: // one that needs approval asks the run's Approver, at the terminal
			ts = append(ts, made[i])
		case builtins && slices.ContainsFunc(tools.Builtins(), func(t *tools.Tool) bool { return t.Name() == name }):
			ts = append(ts, builtin(name))
		default:
			return nil, fmt.Errorf("tool %q: not a built-in or an entry before the agent", name)
		}
	}
	return tools.NewRegistry(ts...)
}

// builtin is the built-in tool called name, which exists.
func builtin(name string) *tools.Tool {
	bs := tools.Builtins()
	return bs[slices.IndexFunc(bs, func(t *tools.Tool) bool { return t.Name() == name })]
}

// lateClient is the Bedrock client of the manifest's agents: the run's,
// known once its backend is built, which is after the tools.
type lateClient struct {
	mu     sync.Mutex
	client converse.Client
}

// set makes c the client.
func (l *lateClient) set(c converse.Client) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.client = c
}

func (l *lateClient) get() (converse.Client, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.client == nil {
		return nil, errors.New("agent: no Bedrock client yet")
	}
	return l.client, nil
}

// Converse is the run's client's.
func (l *lateClient) Converse(ctx context.Context, in *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error) {
	c, err := l.get()
	if err != nil {
		return nil, err
	}
	return c.Converse(ctx, in, optFns...)
}

// ConverseStream is the run's client's.
func (l *lateClient) ConverseStream(ctx context.Context, in *bedrockruntime.ConverseStreamInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseStreamOutput, error) {
	c, err := l.get()
	if err != nil {
		return nil, err
	}
	return c.ConverseStream(ctx, in, optFns...)
}
