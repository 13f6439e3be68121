package bedrocktest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// The module's go.sum has no entry for testify's YAML dependency, so these
// few helpers stand in for assert and must.

type checker struct{ fatal bool }

var (
	expect = checker{}
	must   = checker{fatal: true}
)

func (c checker) fail(t *testing.T, format string, args ...any) {
	t.Helper()
	if c.fatal {
		t.Fatalf(format, args...)
	}
	t.Errorf(format, args...)
}

func (c checker) Equal(t *testing.T, want, got any, msg ...any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		c.fail(t, "got %#v, want %#v %v", got, want, msg)
	}
}

func (c checker) NoError(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		c.fail(t, "unexpected error: %v", err)
	}
}

func (c checker) Error(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		c.fail(t, "expected an error")
	}
}

func (c checker) ErrorAs(t *testing.T, err error, target any) {
	t.Helper()
	if !errors.As(err, target) {
		c.fail(t, "error %v (%T) is not a %T", err, err, target)
	}
}

func (c checker) Contains(t *testing.T, s, sub string, msg ...any) {
	t.Helper()
	if !strings.Contains(s, sub) {
		c.fail(t, "%q does not contain %q %v", s, sub, msg)
	}
}

func (c checker) Len(t *testing.T, v any, n int) {
	t.Helper()
	if l := reflect.ValueOf(v).Len(); l != n {
		c.fail(t, "len = %d, want %d: %#v", l, n, v)
	}
}

func (c checker) True(t *testing.T, ok bool, msg ...any) {
	t.Helper()
	if !ok {
		c.fail(t, "not true: %v", msg)
	}
}
