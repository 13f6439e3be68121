package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
)

// echo returns a raw tool named name that returns its input.
func echo(t *testing.T, name string) *tools.Tool {
	t.Helper()
	tool, err := tools.NewRaw(name, "Returns its input.", json.RawMessage(`{"type":"object"}`),
		func(_ context.Context, in json.RawMessage) (any, error) { return in, nil })
	require.NoError(t, err)
	return tool
}

func TestRegistryKeepsOrder(t *testing.T) {
	c, a, b := echo(t, "c"), echo(t, "a"), echo(t, "b")
	r, err := tools.NewRegistry(c, a)
	require.NoError(t, err)
	require.NoError(t, r.Add(b))

	assert.Equal(t, []string{"c", "a", "b"}, r.Names())
	assert.Equal(t, []*tools.Tool{c, a, b}, r.Tools())
	assert.Equal(t, 3, r.Len())
	got, ok := r.Lookup("a")
	assert.True(t, ok)
	assert.Same(t, a, got)
	_, ok = r.Lookup("missing")
	assert.False(t, ok)

	// Tools returns a copy.
	r.Tools()[0] = nil
	assert.Same(t, c, r.Tools()[0])
}

func TestEmptyRegistries(t *testing.T) {
	for name, r := range map[string]*tools.Registry{"zero value": new(tools.Registry), "nil": nil} {
		t.Run(name, func(t *testing.T) {
			assert.Zero(t, r.Len())
			assert.Empty(t, r.Names())
			assert.Empty(t, r.Tools())
			_, ok := r.Lookup("x")
			assert.False(t, ok)
		})
	}

	var zero tools.Registry
	require.NoError(t, zero.Add(echo(t, "x")))
	assert.Equal(t, []string{"x"}, zero.Names())
	var nilRegistry *tools.Registry
	assert.Error(t, nilRegistry.Add(echo(t, "x")))
}

func TestRegistryRejects(t *testing.T) {
	tests := []struct {
		name    string
		have    []string // registered first
		add     func(t *testing.T) []*tools.Tool
		wantErr error
		want    string
	}{
		{"duplicate of a registered tool", []string{"a"},
			func(t *testing.T) []*tools.Tool { return []*tools.Tool{echo(t, "a")} }, tools.ErrDuplicate, `tools: duplicate tool "a"`},
		{"duplicate within the call", nil,
			func(t *testing.T) []*tools.Tool { return []*tools.Tool{echo(t, "b"), echo(t, "b")} }, tools.ErrDuplicate, `duplicate tool "b"`},
		{"the same tool twice", nil,
			func(t *testing.T) []*tools.Tool { e := echo(t, "b"); return []*tools.Tool{e, e} }, tools.ErrDuplicate, `duplicate tool "b"`},
		{"nil tool", nil,
			func(t *testing.T) []*tools.Tool { return []*tools.Tool{echo(t, "b"), nil} }, tools.ErrInvalidTool, `nil at index 1`},
		{"zero tool", nil,
			func(*testing.T) []*tools.Tool { return []*tools.Tool{{}} }, tools.ErrInvalidTool, `name must match`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := new(tools.Registry)
			for _, name := range tt.have {
				require.NoError(t, r.Add(echo(t, name)))
			}
			err := r.Add(tt.add(t)...)
			require.ErrorIs(t, err, tt.wantErr)
			assert.Contains(t, err.Error(), tt.want)
			assert.ElementsMatch(t, tt.have, r.Names(), "a failed Add registers nothing")
		})
	}
}

func TestNewRegistryFails(t *testing.T) {
	r, err := tools.NewRegistry(echo(t, "a"), echo(t, "a"))
	assert.Nil(t, r)
	assert.ErrorIs(t, err, tools.ErrDuplicate)
}

func TestRegistryConcurrentUse(t *testing.T) {
	var r tools.Registry
	const n = 40
	made := make([]*tools.Tool, n)
	for i := range made {
		made[i] = echo(t, fmt.Sprintf("tool_%d", i))
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { assert.NoError(t, r.Add(made[i])) })
		wg.Go(func() {
			if got, ok := r.Lookup(made[i].Name()); ok {
				assert.Same(t, made[i], got)
			}
			_ = r.Names()
			_ = r.Tools()
			_ = r.Len()
		})
	}
	wg.Wait()
	assert.Equal(t, n, r.Len())
	assert.ElementsMatch(t, made, r.Tools())
}
