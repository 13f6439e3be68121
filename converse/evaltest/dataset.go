package evaltest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrDataset is a dataset that cannot be used: malformed, or naming what
// the run does not have. Its errors name the case and the field.
var ErrDataset = errors.New("malformed dataset")

// Dataset is a set of cases to run against an agent, from Go values or a
// JSON or YAML file (see LoadDataset; converse help eval has the format).
type Dataset struct {
	Name string `json:"name"`
	// Runs is how many times each case runs (1 if 0), and Threshold the
	// share of runs that must pass (1 if 0), unless a case sets its own.
	Runs      int     `json:"runs,omitempty"`
	Threshold float64 `json:"threshold,omitempty"`
	// Judge and User are the models of the judge and of the simulated user,
	// with the files their calls are recorded in (see Recorded); a command
	// such as converse eval reads them.
	Judge *ModelFile `json:"judge,omitempty"`
	User  *ModelFile `json:"user,omitempty"`
	Cases []Case     `json:"cases"`
}

// ModelFile is a model and the recording of its calls, a path relative to
// the dataset's file.
type ModelFile struct {
	Model     string `json:"model"`
	Recording string `json:"recording,omitempty"`
}

// Case is one task for the agent and what it must do.
type Case struct {
	Name string `json:"name"`
	// Prompt is the first user message; Turns are the next ones, sent
	// after each answer (a scripted multi-turn user).
	Prompt string   `json:"prompt"`
	Turns  []string `json:"turns,omitempty"`
	// Goal, when set, makes a simulated User carry on the conversation
	// after Prompt, toward Goal, for at most MaxUserTurns more messages
	// (3 if 0).
	Goal         string   `json:"goal,omitempty"`
	MaxUserTurns int      `json:"maxUserTurns,omitempty"`
	Runs         int      `json:"runs,omitempty"`
	Threshold    float64  `json:"threshold,omitempty"`
	Expect       []Expect `json:"expect"`
	// Assertions are more assertions, from Go.
	Assertions []Assertion `json:"-"`
}

// Expect is one expectation of a Case, in a dataset file: exactly one of
// its fields is set, and it becomes the Assertion of the same name.
type Expect struct {
	Used     string        `json:"used,omitempty"`
	NotUsed  string        `json:"notUsed,omitempty"`
	Sequence []string      `json:"sequence,omitempty"`
	Order    Order         `json:"order,omitempty"` // of Sequence; exact if empty
	Args     *ExpectArgs   `json:"args,omitempty"`
	Calls    *ExpectCalls  `json:"calls,omitempty"`
	Turns    *Range        `json:"turns,omitempty"`
	Tokens   *Limit        `json:"tokens,omitempty"`
	Cost     *Limit        `json:"cost,omitempty"`
	Answer   *ExpectAnswer `json:"answer,omitempty"`
	Judge    *ExpectJudge  `json:"judge,omitempty"`
}

// ExpectArgs expects a call of Tool whose input holds Subset, or is Exact.
type ExpectArgs struct {
	Tool   string          `json:"tool"`
	Subset json.RawMessage `json:"subset,omitempty"`
	Exact  json.RawMessage `json:"exact,omitempty"`
}

// ExpectCalls expects Min to Max calls of Tool (no upper bound if Max is
// absent).
type ExpectCalls struct {
	Tool string `json:"tool"`
	Min  int    `json:"min,omitempty"`
	Max  *int   `json:"max,omitempty"`
}

// Range bounds the turns: Min to Max (no upper bound if Max is absent).
type Range struct {
	Min int  `json:"min,omitempty"`
	Max *int `json:"max,omitempty"`
}

// Limit bounds the tokens, or the cost in US dollars.
type Limit struct {
	Max float64 `json:"max"`
}

// ExpectAnswer expects the final answer to equal, contain or match
// (a regexp) a text, or to be JSON valid against Schema: one of them.
type ExpectAnswer struct {
	Equals   string          `json:"equals,omitempty"`
	Contains string          `json:"contains,omitempty"`
	Matches  string          `json:"matches,omitempty"`
	Schema   json.RawMessage `json:"schema,omitempty"`
}

// ExpectJudge asks the judge to grade the trajectory by Rubric, plain
// text; it passes with a pass verdict and a score of MinScore or more.
type ExpectJudge struct {
	Rubric   string  `json:"rubric"`
	MinScore float64 `json:"minScore,omitempty"`
}

// LoadDataset reads a dataset from a JSON file, or a YAML file (.yaml,
// .yml). Unknown fields are errors. Its errors match ErrDataset and name
// the file, the case and the field.
func LoadDataset(path string) (*Dataset, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("evaltest: %w", err)
	}
	ds, err := ParseDataset(b, strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml"))
	if err != nil {
		return nil, fmt.Errorf("evaltest: %s: %w", path, err)
	}
	ds.Judge.resolve(filepath.Dir(path))
	ds.User.resolve(filepath.Dir(path))
	return ds, nil
}

func (m *ModelFile) resolve(dir string) {
	if m != nil && m.Recording != "" && !filepath.IsAbs(m.Recording) {
		m.Recording = filepath.Join(dir, m.Recording)
	}
}

// ParseDataset reads a dataset from JSON, or from YAML if yml is set, and
// checks it as LoadDataset does.
func ParseDataset(data []byte, yml bool) (*Dataset, error) {
	if yml {
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrDataset, err)
		}
		var err error
		if data, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrDataset, err)
		}
	}
	var raw struct {
		Dataset
		Cases []json.RawMessage `json:"cases"`
	}
	if err := strict(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDataset, err)
	}
	ds := raw.Dataset
	ds.Cases = make([]Case, len(raw.Cases))
	for i, c := range raw.Cases {
		if err := strict(c, &ds.Cases[i]); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrDataset, caseName(i, c), err)
		}
	}
	if err := ds.Check(nil); err != nil {
		return nil, err
	}
	return &ds, nil
}

// strict decodes data into v, refusing unknown fields and trailing data.
func strict(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("data after the dataset")
	}
	return nil
}

// caseName names case i for an error: its place and, if it has one, name.
func caseName(i int, raw json.RawMessage) string {
	var c struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &c) == nil && c.Name != "" {
		return fmt.Sprintf("case %d (%s)", i+1, c.Name)
	}
	return fmt.Sprintf("case %d", i+1)
}

// Check checks the dataset before anything runs. Every case has a name
// and a prompt. Every expectation has one kind, is well formed, and names
// only tools of tools (when not nil). A judge or a simulated user appears
// only where the dataset names its model.
func (ds *Dataset) Check(tools []string) error {
	var errs []error
	if len(ds.Cases) == 0 {
		errs = append(errs, errors.New("cases: none"))
	}
	seen := map[string]bool{}
	for i := range ds.Cases {
		c := &ds.Cases[i]
		where := fmt.Sprintf("case %d (%s)", i+1, c.Name)
		switch {
		case c.Name == "":
			errs = append(errs, fmt.Errorf("case %d: name: empty", i+1))
		case seen[c.Name]:
			errs = append(errs, fmt.Errorf("%s: name: used by an earlier case", where))
		case strings.TrimSpace(c.Prompt) == "":
			errs = append(errs, fmt.Errorf("%s: prompt: empty", where))
		case c.Goal != "" && ds.User == nil:
			errs = append(errs, fmt.Errorf("%s: goal: the dataset has no user model", where))
		case c.Threshold < 0 || c.Threshold > 1:
			errs = append(errs, fmt.Errorf("%s: threshold: %g is not a share from 0 to 1", where, c.Threshold))
		}
		seen[c.Name] = true
		for j, e := range c.Expect {
			if err := e.check(ds.Judge != nil, tools); err != nil {
				errs = append(errs, fmt.Errorf("%s: expect[%d]: %w", where, j, err))
			}
		}
		if err := Validate(tools, c.Assertions...); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
	}
	for _, m := range []struct {
		field string
		file  *ModelFile
	}{{"judge", ds.Judge}, {"user", ds.User}} {
		if m.file != nil && strings.TrimSpace(m.file.Model) == "" {
			errs = append(errs, fmt.Errorf("%s: model: empty", m.field))
		}
	}
	if ds.Threshold < 0 || ds.Threshold > 1 {
		errs = append(errs, fmt.Errorf("threshold: %g is not a share from 0 to 1", ds.Threshold))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrDataset, err)
	}
	return nil
}

// check checks one expectation.
func (e Expect) check(haveJudge bool, tools []string) error {
	if n := e.kinds(); n != 1 {
		return fmt.Errorf("want exactly one of used, notUsed, sequence, args, calls, turns, tokens, cost, answer and judge, got %d", n)
	}
	if e.Judge != nil {
		switch {
		case !haveJudge:
			return errors.New("judge: the dataset has no judge model")
		case strings.TrimSpace(e.Judge.Rubric) == "":
			return errors.New("judge: rubric: empty")
		}
		return nil
	}
	a, err := e.assertion()
	if err != nil {
		return err
	}
	return Validate(tools, a)
}

func (e Expect) kinds() int {
	n := 0
	for _, set := range []bool{e.Used != "", e.NotUsed != "", e.Sequence != nil, e.Args != nil, e.Calls != nil,
		e.Turns != nil, e.Tokens != nil, e.Cost != nil, e.Answer != nil, e.Judge != nil} {
		if set {
			n++
		}
	}
	return n
}

// assertion is the Assertion of an expectation other than a judge's.
func (e Expect) assertion() (Assertion, error) {
	switch {
	case e.Used != "":
		return Used(e.Used), nil
	case e.NotUsed != "":
		return NotUsed(e.NotUsed), nil
	case e.Sequence != nil:
		order := e.Order
		if order == "" {
			order = Exact
		}
		return Sequence(order, e.Sequence...), nil
	case e.Args != nil:
		return e.Args.assertion()
	case e.Calls != nil:
		return Calls(e.Calls.Tool, e.Calls.Min, maxOf(e.Calls.Max)), nil
	case e.Turns != nil:
		return Turns(e.Turns.Min, maxOf(e.Turns.Max)), nil
	case e.Tokens != nil:
		return Tokens(int(e.Tokens.Max)), nil
	case e.Cost != nil:
		return Cost(e.Cost.Max), nil
	}
	return e.Answer.assertion()
}

// maxOf is an absent maximum as -1, no bound.
func maxOf(max *int) int {
	if max == nil {
		return -1
	}
	return *max
}

func (a *ExpectArgs) assertion() (Assertion, error) {
	switch {
	case a.Tool == "":
		return Assertion{}, errors.New("args: tool: empty")
	case (a.Subset == nil) == (a.Exact == nil):
		return Assertion{}, errors.New("args: want one of subset and exact")
	case a.Exact != nil:
		return ArgsExact(a.Tool, a.Exact), nil
	}
	return Args(a.Tool, a.Subset), nil
}

func (a *ExpectAnswer) assertion() (Assertion, error) {
	n := 0
	for _, set := range []bool{a.Equals != "", a.Contains != "", a.Matches != "", a.Schema != nil} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return Assertion{}, errors.New("answer: want one of equals, contains, matches and schema")
	case a.Equals != "":
		return AnswerEquals(a.Equals), nil
	case a.Contains != "":
		return AnswerContains(a.Contains), nil
	case a.Matches != "":
		return AnswerMatches(a.Matches), nil
	}
	return AnswerSchema(a.Schema), nil
}
