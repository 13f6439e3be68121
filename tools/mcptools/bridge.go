package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/internal/modelerr"
)

// Bridge offers the tools of MCP servers. Its methods are safe for
// concurrent use.
type Bridge struct {
	reg       *tools.Registry // nil: the tools are given by Tools only
	conns     []*conn
	refreshes sync.WaitGroup
	stop      context.CancelFunc // ends refreshes

	mu       sync.Mutex
	offered  map[string]offer       // by our name: what the servers offer now
	made     map[string]*tools.Tool // every tool made, by our name
	order    []string               // names of made, in the order made
	names    map[remote]string      // the name given to each server's tool
	warnings []error
	closed   bool
}

// offer is a server's tool as offered now.
type offer struct {
	conn        *conn
	tool        string // the server's name of it
	annotations Annotations
}

// remote names a tool on a server.
type remote struct {
	conn *conn
	tool string
}

// Connect starts or reaches every server, at once, lists their tools and adds
// them to reg, if not nil (see [Bridge.Tools] otherwise). A server that cannot
// be started or listed within its startup timeout, or a server description
// that is not valid, is an error naming it. Connect then stops the others:
// every server is needed or none.
//
// ctx bounds the start only; the bridge keeps the servers until
// [Bridge.Close].
func Connect(ctx context.Context, reg *tools.Registry, servers ...Server) (*Bridge, error) {
	refreshCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	b := &Bridge{reg: reg, stop: stop, offered: map[string]offer{}, made: map[string]*tools.Tool{}, names: map[remote]string{}}
	seen := map[string]bool{}
	for _, s := range servers {
		s, err := s.check()
		if err != nil {
			b.Close()
			return nil, err
		}
		if seen[s.Name] {
			b.Close()
			return nil, fmt.Errorf("mcptools: two servers named %q", s.Name)
		}
		seen[s.Name] = true
		var c *conn
		c = newConn(s, func() { b.changed(refreshCtx, c) })
		b.conns = append(b.conns, c)
	}
	lists := make([][]*mcp.Tool, len(b.conns))
	errs := make([]error, len(b.conns))
	failed, fail := context.WithCancel(ctx) // the first failure stops the other starts
	defer fail()
	var wg sync.WaitGroup
	for i, c := range b.conns {
		wg.Go(func() {
			if lists[i], errs[i] = c.list(failed); errs[i] != nil {
				fail()
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		// The first failure, not a start it stopped.
		if err != nil && (ctx.Err() != nil || !errors.Is(err, context.Canceled)) {
			b.Close()
			return nil, fmt.Errorf("mcptools: server %q: %w", b.conns[i].cfg.Name, err)
		}
	}
	for i, c := range b.conns {
		b.update(c, lists[i])
	}
	return b, nil
}

// changed refreshes a server's tools after notifications/tools/list_changed,
// off the goroutine that delivers the notification: listing waits for an
// answer that goroutine would deliver.
func (b *Bridge) changed(ctx context.Context, c *conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.refreshes.Go(func() {
		c.refreshing.Lock() // one at a time: the last to list sees the last change
		defer c.refreshing.Unlock()
		list, err := c.list(ctx)
		if err != nil {
			b.warn(fmt.Errorf("mcptools: server %q: listing its changed tools: %w", c.cfg.Name, err))
			return
		}
		b.update(c, list)
	})
}

// update makes c's offered tools those of list: new ones are made (and
// added to the registry), missing ones no longer offered.
func (b *Bridge) update(c *conn, list []*mcp.Tool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for name, o := range b.offered {
		if o.conn == c {
			delete(b.offered, name)
		}
	}
	var added []*tools.Tool
	for _, t := range list {
		if !c.cfg.wants(t.Name) {
			continue
		}
		name, ok := b.names[remote{c, t.Name}]
		if !ok {
			tool, err := b.make(c, t)
			if err != nil {
				b.warnings = append(b.warnings, err)
				continue
			}
			name = tool.Name()
			added = append(added, tool)
		}
		b.offered[name] = offer{conn: c, tool: t.Name, annotations: c.cfg.annotations(t.Annotations)}
	}
	if b.reg == nil || len(added) == 0 {
		return
	}
	for _, t := range added {
		// One at a time: a name the registry took meanwhile costs only that tool.
		if err := b.reg.Add(t); err != nil {
			b.warnings = append(b.warnings, fmt.Errorf("%w: %q: %w", ErrSkipped, t.Name(), err))
		}
	}
}

// make makes the Tool of a server's tool, under a name not taken. b.mu is
// held.
func (b *Bridge) make(c *conn, t *mcp.Tool) (*tools.Tool, error) {
	name, renamed, ok := pickName(c.cfg.Name, t.Name, func(n string) bool {
		_, mine := b.made[n]
		_, theirs := b.reg.Lookup(n)
		return mine || theirs
	})
	if !ok {
		return nil, fmt.Errorf("%w: server %q: tool %q: no free name", ErrSkipped, c.cfg.Name, t.Name)
	}
	schema, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("%w: server %q: tool %q: input schema: %w", ErrSkipped, c.cfg.Name, t.Name, err)
	}
	description := t.Description
	if description == "" {
		description = t.Title
	}
	if description == "" {
		description = "The " + t.Name + " tool of the MCP server " + c.cfg.Name + "."
	}
	approve := c.cfg.ApprovalPolicy != nil && c.cfg.ApprovalPolicy(t.Name, c.cfg.annotations(t.Annotations))
	tool, err := tools.NewRaw(name, description, schema, b.dispatch(name), func(o *tools.Options) {
		o.Timeout = c.cfg.Timeout
		o.RequireApproval = approve
	})
	if err != nil {
		return nil, fmt.Errorf("%w: server %q: tool %q: %w", ErrSkipped, c.cfg.Name, t.Name, err)
	}
	if renamed {
		b.warnings = append(b.warnings, fmt.Errorf("%w: server %q: tool %q is offered as %q, its name being taken", ErrRenamed, c.cfg.Name, t.Name, name))
	}
	b.made[name] = tool
	b.order = append(b.order, name)
	b.names[remote{c, t.Name}] = name
	return tool, nil
}

// dispatch calls the tool offered as name now.
func (b *Bridge) dispatch(name string) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, input json.RawMessage) (any, error) {
		b.mu.Lock()
		o, ok := b.offered[name]
		b.mu.Unlock()
		if !ok {
			return nil, modelerr.Errorf(ErrNotOffered, "the tool %q is no longer offered by its MCP server", name)
		}
		return o.conn.call(ctx, o.tool, input)
	}
}

func (b *Bridge) warn(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.warnings = append(b.warnings, err)
}

// Tools returns the tools offered now, in the order they were first listed.
func (b *Bridge) Tools() []*tools.Tool {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ts []*tools.Tool
	for _, name := range b.order {
		if _, ok := b.offered[name]; ok {
			ts = append(ts, b.made[name])
		}
	}
	return ts
}

// Annotations returns the annotations of the tool offered as name, and
// whether it is offered now.
func (b *Bridge) Annotations(name string) (Annotations, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	o, ok := b.offered[name]
	return o.annotations, ok
}

// Server returns the name of the server (Server.Name) whose tool is
// offered as name, and whether one is offered now.
func (b *Bridge) Server(name string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	o, ok := b.offered[name]
	if !ok {
		return "", false
	}
	return o.conn.cfg.Name, true
}

// Servers returns, for each server, its name and the number of tools it
// offers now, in the order given to Connect.
func (b *Bridge) Servers() []ServerTools {
	b.mu.Lock()
	defer b.mu.Unlock()
	list := make([]ServerTools, len(b.conns))
	for i, c := range b.conns {
		list[i].Name = c.cfg.Name
		for _, o := range b.offered {
			if o.conn == c {
				list[i].Tools++
			}
		}
	}
	return list
}

// ServerTools is a server's name and the number of tools it offers.
type ServerTools struct {
	Name  string
	Tools int
}

// Warnings returns what Connect and the refreshes since could not do as
// asked: tools skipped ([ErrSkipped]) or renamed ([ErrRenamed]), and lists
// that failed.
func (b *Bridge) Warnings() []error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.warnings)
}

// Close stops every server, waiting for each process to exit and reaping
// it, and ends the bridge's goroutines. Calls after Close fail. Close is
// idempotent and returns nil.
func (b *Bridge) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.stop()
	b.refreshes.Wait()
	var wg sync.WaitGroup
	for _, c := range b.conns {
		wg.Go(c.close)
	}
	wg.Wait()
	return nil
}
