package tools

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Registry holds tools by name, in registration order. The zero value is an
// empty registry ready to use; a nil *Registry is empty too, and cannot be
// added to. A Registry is safe for concurrent use.
type Registry struct {
	mu     sync.RWMutex
	byName map[string]*Tool
	order  []*Tool
}

// NewRegistry returns a registry holding ts, or the error [Registry.Add]
// would return.
func NewRegistry(ts ...*Tool) (*Registry, error) {
	r := new(Registry)
	if err := r.Add(ts...); err != nil {
		return nil, err
	}
	return r, nil
}

// Add registers ts, all or none. A tool may be invalid: nil, not made by a
// constructor, or with a bad name, description or schema (see
// [ErrInvalidTool]). It may have the name of a registered tool or of
// another tool in ts ([ErrDuplicate]). If any tool is either, Add
// registers nothing and returns an error.
func (r *Registry) Add(ts ...*Tool) error {
	if r == nil {
		return errors.New("tools: Add to a nil *Registry")
	}
	for i, t := range ts {
		if t == nil {
			return fmt.Errorf("%w: nil at index %d", ErrInvalidTool, i)
		}
		if err := t.check(); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := make(map[string]bool, len(ts))
	for _, t := range ts {
		if _, taken := r.byName[t.name]; taken || seen[t.name] {
			return fmt.Errorf("%w %q", ErrDuplicate, t.name)
		}
		seen[t.name] = true
	}
	if r.byName == nil {
		r.byName = make(map[string]*Tool, len(ts))
	}
	for _, t := range ts {
		r.byName[t.name] = t
	}
	r.order = append(r.order, ts...)
	return nil
}

// Lookup returns the tool registered under name.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	if r == nil {
		return nil, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.byName[name]
	return t, ok
}

// Tools returns the registered tools in registration order. The caller owns
// the slice.
func (r *Registry) Tools() []*Tool {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.order)
}

// Names returns the names of the registered tools in registration order.
func (r *Registry) Names() []string {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, len(r.order))
	for i, t := range r.order {
		names[i] = t.name
	}
	return names
}

// Len returns the number of registered tools.
func (r *Registry) Len() int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.order)
}
