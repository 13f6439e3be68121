package evaltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// ErrFailed matches every *Failure, for errors.Is.
var ErrFailed = errors.New("assertion failed")

// ErrUnknownTool is an assertion naming a tool the agent does not have.
var ErrUnknownTool = errors.New("unknown tool")

// Assertion is one expectation about a Trajectory, made by the functions
// of this package (Used, Sequence, Args, AnswerMatches, ...).
type Assertion struct {
	// Name says what it expects, as reports show it: "used(calculator)".
	Name  string
	tools []string
	err   error // a malformed assertion, such as a regexp that does not compile
	check func(context.Context, *Trajectory) (string, error)
}

// Failure is an assertion that a Trajectory failed: why, and the
// trajectory, so that a reader sees what happened.
type Failure struct {
	Assertion  string
	Reason     string
	Trajectory *Trajectory
}

// Error says which assertion failed and why, then shows the trajectory.
func (f *Failure) Error() string {
	return fmt.Sprintf("evaltest: %s: %s\n%s", f.Assertion, f.Reason, f.Trajectory)
}

// Is makes errors.Is(f, ErrFailed) true.
func (f *Failure) Is(target error) bool { return target == ErrFailed }

// Check checks t against a, returning a *Failure, a's own error if it
// is malformed, or the error of a judge's model call.
func (a Assertion) Check(ctx context.Context, t *Trajectory) error {
	if a.err != nil {
		return a.err
	}
	if a.check == nil {
		return fmt.Errorf("evaltest: assertion %q checks nothing: make assertions with this package's functions", a.Name)
	}
	reason, err := a.check(ctx, t)
	if err != nil {
		return fmt.Errorf("evaltest: %s: %w", a.Name, err)
	}
	if reason != "" {
		return &Failure{Assertion: a.Name, Reason: reason, Trajectory: t}
	}
	return nil
}

// Check checks t against every assertion and joins their failures.
func Check(ctx context.Context, t *Trajectory, as ...Assertion) error {
	var errs []error
	for _, a := range as {
		errs = append(errs, a.Check(ctx, t))
	}
	return errors.Join(errs...)
}

// TB is the part of testing.TB that Assert and Report.Assert use: a
// *testing.T is one. It keeps package testing out of the programs that
// use this package, such as the converse command.
type TB interface {
	Helper()
	Context() context.Context
	Error(args ...any)
	Errorf(format string, args ...any)
	Log(args ...any)
}

// Assert checks tr against every assertion, reporting each failure with
// tb.Error, and reports whether all passed.
func Assert(tb TB, tr *Trajectory, as ...Assertion) bool {
	tb.Helper()
	ok := true
	for _, a := range as {
		if err := a.Check(tb.Context(), tr); err != nil {
			tb.Error(err)
			ok = false
		}
	}
	return ok
}

// Validate reports the malformed assertions, and those naming a tool
// that is not in tools (when tools is not nil), before anything runs.
func Validate(tools []string, as ...Assertion) error {
	var errs []error
	for _, a := range as {
		if a.err != nil {
			errs = append(errs, a.err)
		}
		for _, name := range a.tools {
			if tools != nil && !slices.Contains(tools, name) {
				errs = append(errs, fmt.Errorf("evaltest: %s: %w %q (the tools are %s)", a.Name, ErrUnknownTool, name, strings.Join(tools, ", ")))
			}
		}
	}
	return errors.Join(errs...)
}

// Used expects at least one call of tool.
func Used(tool string) Assertion {
	return Calls(tool, 1, -1)
}

// NotUsed expects no call of tool.
func NotUsed(tool string) Assertion {
	return Calls(tool, 0, 0)
}

// Calls expects between min and max calls of tool; a negative max is no
// bound.
func Calls(tool string, min, max int) Assertion {
	name := fmt.Sprintf("calls(%s, %d..%d)", tool, min, max)
	switch {
	case min == 1 && max < 0:
		name = "used(" + tool + ")"
	case min == 0 && max == 0:
		name = "not-used(" + tool + ")"
	case max < 0:
		name = fmt.Sprintf("calls(%s, %d..)", tool, min)
	}
	return Assertion{Name: name, tools: []string{tool}, check: func(_ context.Context, t *Trajectory) (string, error) {
		n := 0
		for _, c := range t.Calls {
			if c.Tool == tool {
				n++
			}
		}
		if n < min || max >= 0 && n > max {
			return fmt.Sprintf("%s was called %d times", tool, n), nil
		}
		return "", nil
	}}
}

// Order is how Sequence compares the tools called with its list.
type Order string

// The orders of Sequence.
const (
	Exact    Order = "exact"     // the calls are the list, in its order
	InOrder  Order = "in-order"  // the list appears in the calls in order, other calls between
	AnyOrder Order = "any-order" // the calls are the list, in any order
	Subset   Order = "subset"    // every tool of the list was called
	Superset Order = "superset"  // every tool called is in the list
)

// Sequence expects the tools called to match tools as order says.
func Sequence(order Order, tools ...string) Assertion {
	a := Assertion{Name: fmt.Sprintf("sequence(%s: %s)", order, strings.Join(tools, ", ")), tools: tools}
	match, ok := orders[order]
	if !ok {
		a.err = fmt.Errorf("evaltest: %s: unknown order %q (want exact, in-order, any-order, subset or superset)", a.Name, order)
	}
	a.check = func(_ context.Context, t *Trajectory) (string, error) {
		if got := t.Tools(); !match(tools, got) {
			return fmt.Sprintf("want [%s] (%s), got [%s]", strings.Join(tools, " "), order, strings.Join(got, " ")), nil
		}
		return "", nil
	}
	return a
}

var orders = map[Order]func(want, got []string) bool{
	Exact: slices.Equal[[]string],
	InOrder: func(want, got []string) bool {
		i := 0
		for _, g := range got {
			if i < len(want) && g == want[i] {
				i++
			}
		}
		return i == len(want)
	},
	AnyOrder: func(want, got []string) bool {
		return slices.Equal(slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(got)))
	},
	Subset: func(want, got []string) bool {
		return !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(got, w) })
	},
	Superset: func(want, got []string) bool {
		return !slices.ContainsFunc(got, func(g string) bool { return !slices.Contains(want, g) })
	},
}

// Args expects a call of tool whose input holds want: every member of
// want's objects, recursively, with the same values (a JSON subset).
func Args(tool string, want any) Assertion {
	return argsMatch(tool, "args", want, subsetOf)
}

// ArgsExact expects a call of tool whose input is want, compared as JSON.
func ArgsExact(tool string, want any) Assertion {
	return argsMatch(tool, "args-exact", want, reflect.DeepEqual)
}

// ArgsFunc expects a call of tool whose input ok accepts; what names the
// predicate in reports.
func ArgsFunc(tool, what string, ok func(input json.RawMessage) bool) Assertion {
	name := fmt.Sprintf("args(%s: %s)", tool, what)
	return Assertion{Name: name, tools: []string{tool}, check: func(_ context.Context, t *Trajectory) (string, error) {
		for _, c := range t.Calls {
			if c.Tool == tool && ok(c.Input) {
				return "", nil
			}
		}
		return fmt.Sprintf("no call of %s has input that %s", tool, what), nil
	}}
}

func argsMatch(tool, kind string, want any, match func(want, got any) bool) Assertion {
	w, err := asJSON(want)
	a := Assertion{Name: fmt.Sprintf("%s(%s: %s)", kind, tool, short(compact(w), 80)), tools: []string{tool}}
	if err != nil {
		a.err = fmt.Errorf("evaltest: %s: %w", a.Name, err)
	}
	a.check = func(_ context.Context, t *Trajectory) (string, error) {
		for _, c := range t.Calls {
			var got any
			if c.Tool == tool && json.Unmarshal(c.Input, &got) == nil && match(w, got) {
				return "", nil
			}
		}
		return fmt.Sprintf("no call of %s has input matching %s", tool, compact(w)), nil
	}
	return a
}

// asJSON is v as encoding/json decodes JSON into an any.
func asJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// subsetOf reports whether got holds want: objects by their members,
// arrays element by element, other values by equality.
func subsetOf(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if gv, ok := g[k]; !ok || !subsetOf(v, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !subsetOf(w[i], g[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(want, got)
}

// Turns expects between min and max model calls; a negative max is no
// bound.
func Turns(min, max int) Assertion {
	return bound(fmt.Sprintf("turns(%d..%d)", min, max), func(t *Trajectory) float64 { return float64(t.Turns) }, float64(min), float64(max))
}

// Tokens expects at most max tokens in all (input and output).
func Tokens(max int) Assertion {
	return bound(fmt.Sprintf("tokens(..%d)", max), func(t *Trajectory) float64 { return float64(t.Usage.TotalTokens) }, 0, float64(max))
}

// Cost expects a cost of at most max US dollars.
func Cost(max float64) Assertion {
	return bound(fmt.Sprintf("cost(..$%g)", max), func(t *Trajectory) float64 { return t.CostUSD }, 0, max)
}

func bound(name string, of func(*Trajectory) float64, min, max float64) Assertion {
	return Assertion{Name: name, check: func(_ context.Context, t *Trajectory) (string, error) {
		if v := of(t); v < min || max >= 0 && v > max {
			return fmt.Sprintf("got %g", v), nil
		}
		return "", nil
	}}
}

// AnswerEquals expects the final answer to be text, spaces around it aside.
func AnswerEquals(text string) Assertion {
	return answer(fmt.Sprintf("answer-equals(%q)", short(text, 40)), func(s string) bool { return strings.TrimSpace(s) == strings.TrimSpace(text) })
}

// AnswerContains expects the final answer to contain text.
func AnswerContains(text string) Assertion {
	return answer(fmt.Sprintf("answer-contains(%q)", short(text, 40)), func(s string) bool { return strings.Contains(s, text) })
}

// AnswerMatches expects the final answer to match the regular expression
// expr (package regexp's syntax).
func AnswerMatches(expr string) Assertion {
	re, err := regexp.Compile(expr)
	a := answer(fmt.Sprintf("answer-matches(%s)", expr), func(s string) bool { return re.MatchString(s) })
	if err != nil {
		a.err = fmt.Errorf("evaltest: %s: %w", a.Name, err)
	}
	return a
}

func answer(name string, ok func(string) bool) Assertion {
	return Assertion{Name: name, check: func(_ context.Context, t *Trajectory) (string, error) {
		if !ok(t.Answer) {
			return fmt.Sprintf("the answer is %q", short(t.Answer, 200)), nil
		}
		return "", nil
	}}
}

// AnswerSchema expects the final answer to be JSON valid against the JSON
// Schema schema.
func AnswerSchema(schema json.RawMessage) Assertion {
	a := Assertion{Name: "answer-schema"}
	var s jsonschema.Schema
	var rs *jsonschema.Resolved
	err := json.Unmarshal(schema, &s)
	if err == nil {
		rs, err = s.Resolve(nil)
	}
	if err != nil {
		a.err = fmt.Errorf("evaltest: answer-schema: %w", err)
	}
	a.check = func(_ context.Context, t *Trajectory) (string, error) {
		var v any
		if err := json.Unmarshal([]byte(t.Answer), &v); err != nil {
			return fmt.Sprintf("the answer is not JSON (%v): %q", err, short(t.Answer, 200)), nil
		}
		if err := rs.Validate(v); err != nil {
			return err.Error(), nil
		}
		return "", nil
	}
	return a
}
