package evaltest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tooluse/bedrock/converse"
)

// Runner runs the cases of a Dataset against an agent, each case as many
// times as it says, and reports their pass rates.
type Runner struct {
	// Agent makes the conversation of one run: a new one every time.
	Agent func(ctx context.Context) (*converse.Conversation, error)
	// Tools are the names of the agent's tools, against which the
	// assertions are checked before anything runs; nil checks none.
	Tools []string
	// Judge grades the judge expectations, and User plays the cases with
	// a goal; each may be nil when no case needs it.
	Judge *Judge
	User  *User
	// Progress, if set, hears of each run as it starts: the case, the
	// run's number from 1 and the runs of all cases done so far and in all.
	Progress func(c *Case, run, done, total int)
}

// Run checks ds (see Dataset.Check), then runs its cases in order, one
// run at a time. A run whose agent fails (an error of a Send) fails; a
// failure of the judge or the simulated user ends Run with an error naming
// the case and the run.
func (r *Runner) Run(ctx context.Context, ds *Dataset) (*Report, error) {
	if err := r.check(ds); err != nil {
		return nil, err
	}
	rep := &Report{Dataset: ds.Name}
	total, done := 0, 0
	for _, c := range ds.Cases {
		total += runsOf(c.Runs, ds.Runs)
	}
	for i := range ds.Cases {
		c := &ds.Cases[i]
		as, err := r.assertions(c)
		if err != nil {
			return nil, err
		}
		cr := newCaseReport(c, ds, as)
		for n := 1; n <= cr.Runs; n++ {
			if r.Progress != nil {
				r.Progress(c, n, done, total)
			}
			if err := r.runOnce(ctx, c, as, cr); err != nil {
				return nil, fmt.Errorf("evaltest: case %s: run %d: %w", c.Name, n, err)
			}
			done++
		}
		cr.finish()
		rep.Cases = append(rep.Cases, cr)
	}
	return rep, nil
}

func runsOf(caseRuns, dsRuns int) int {
	switch {
	case caseRuns > 0:
		return caseRuns
	case dsRuns > 0:
		return dsRuns
	}
	return 1
}

func (r *Runner) check(ds *Dataset) error {
	if r.Agent == nil {
		return errors.New("evaltest: the Runner has no Agent")
	}
	if err := ds.Check(r.Tools); err != nil {
		return fmt.Errorf("evaltest: %w", err)
	}
	for _, c := range ds.Cases {
		switch {
		case c.Goal != "" && r.User == nil:
			return fmt.Errorf("evaltest: %w: case %s: goal: the runner has no User", ErrDataset, c.Name)
		case hasJudge(c) && r.Judge == nil:
			return fmt.Errorf("evaltest: %w: case %s: expect: a judge expectation, and the runner has no Judge", ErrDataset, c.Name)
		}
	}
	return nil
}

func hasJudge(c Case) bool {
	for _, e := range c.Expect {
		if e.Judge != nil {
			return true
		}
	}
	return false
}

// assertions are c's expectations as assertions, then its own.
func (r *Runner) assertions(c *Case) ([]Assertion, error) {
	var as []Assertion
	for _, e := range c.Expect {
		if e.Judge != nil {
			as = append(as, r.Judge.Rubric(e.Judge.Rubric, e.Judge.MinScore))
			continue
		}
		a, err := e.assertion()
		if err != nil {
			return nil, err // Check has refused it already
		}
		as = append(as, a)
	}
	return append(as, c.Assertions...), nil
}

// runOnce runs c once and adds the outcome to cr. Its error is the judge's
// or the user's.
func (r *Runner) runOnce(ctx context.Context, c *Case, as []Assertion, cr *CaseReport) error {
	start := time.Now()
	conv, err := r.Agent(ctx)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	sendErr := r.converse(ctx, conv, c)
	cr.Duration += time.Since(start)
	if ctx.Err() != nil {
		return ctx.Err() // not the agent's failure
	}
	var userErr *userError
	if errors.As(sendErr, &userErr) {
		return userErr.err
	}
	t := FromState(conv.State())
	cr.Usage = cr.Usage.Add(t.Usage)
	cr.CostUSD += t.CostUSD
	passed := sendErr == nil
	if sendErr != nil {
		cr.Errors = append(cr.Errors, sendErr.Error())
	}
	for i, a := range as {
		err := a.Check(ctx, t)
		var f *Failure
		switch {
		case err == nil && sendErr == nil:
			cr.Assertions[i].Passed++
			continue
		case errors.As(err, &f):
			cr.Assertions[i].failed(f.Reason, t)
		case err != nil:
			return err // a judge's call failed, or the assertion is malformed
		default:
			cr.Assertions[i].failed("the agent failed: "+sendErr.Error(), t)
		}
		passed = false
	}
	if passed {
		cr.Passed++
	}
	return nil
}

// userError is a failure of the simulated user, not of the agent.
type userError struct{ err error }

func (e *userError) Error() string { return e.err.Error() }

// converse sends the case's messages: the prompt, the scripted turns,
// then the simulated user's until it is done.
func (r *Runner) converse(ctx context.Context, conv *converse.Conversation, c *Case) error {
	for _, msg := range append([]string{c.Prompt}, c.Turns...) {
		if _, err := conv.Send(ctx, msg); err != nil {
			return err
		}
	}
	if c.Goal == "" {
		return nil
	}
	turns := c.MaxUserTurns
	if turns == 0 {
		turns = 3
	}
	for range turns {
		next, err := r.User.Next(ctx, c.Goal, conv.History())
		if err != nil {
			return &userError{err}
		}
		if next.Done {
			return nil
		}
		if _, err := conv.Send(ctx, next.Message); err != nil {
			return err
		}
	}
	return nil
}
