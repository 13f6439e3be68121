package evaltest

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tooluse/bedrock/converse"
)

// Report is the outcome of a Runner's Run: the pass rate of each case and
// of each of its assertions, with what the runs spent. It marshals to JSON.
type Report struct {
	Dataset string        `json:"dataset"`
	Cases   []*CaseReport `json:"cases"`
}

// CaseReport is the outcome of one case's runs.
type CaseReport struct {
	Name      string  `json:"name"`
	Runs      int     `json:"runs"`
	Passed    int     `json:"passed"`
	PassRate  float64 `json:"passRate"`
	Threshold float64 `json:"threshold"`
	// OK says the pass rate reached the threshold.
	OK         bool               `json:"ok"`
	Assertions []*AssertionReport `json:"assertions"`
	// Errors are the errors of the agent's failed runs.
	Errors   []string       `json:"errors,omitempty"`
	Usage    converse.Usage `json:"usage"`
	CostUSD  float64        `json:"costUSD"`
	Duration time.Duration  `json:"durationNs"`
}

// AssertionReport is how often one assertion of a case passed, and why it
// first failed, with the trajectory.
type AssertionReport struct {
	Name    string `json:"name"`
	Passed  int    `json:"passed"`
	Failure string `json:"failure,omitempty"`
}

func newCaseReport(c *Case, ds *Dataset, as []Assertion) *CaseReport {
	cr := &CaseReport{Name: c.Name, Runs: runsOf(c.Runs, ds.Runs), Threshold: c.Threshold}
	if cr.Threshold == 0 {
		cr.Threshold = ds.Threshold
	}
	if cr.Threshold == 0 {
		cr.Threshold = 1
	}
	for _, a := range as {
		cr.Assertions = append(cr.Assertions, &AssertionReport{Name: a.Name})
	}
	return cr
}

func (a *AssertionReport) failed(reason string, t *Trajectory) {
	if a.Failure == "" {
		a.Failure = reason + "\n" + t.String()
	}
}

func (cr *CaseReport) finish() {
	cr.PassRate = float64(cr.Passed) / float64(cr.Runs)
	cr.OK = cr.PassRate >= cr.Threshold
}

// OK reports whether every case reached its threshold.
func (r *Report) OK() bool {
	for _, c := range r.Cases {
		if !c.OK {
			return false
		}
	}
	return true
}

// WriteTable writes the report as a table: a line per case, then one per
// assertion with its pass rate, then the first failure of each assertion
// that failed.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tPASS\tRATE\tTHRESHOLD\tTOKENS\tCOST\tDURATION\t")
	var failures []string
	for _, c := range r.Cases {
		mark := "ok"
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%.0f%%\t%.0f%%\t%d\t$%.4f\t%s\t%s\n", c.Name, c.Passed, c.Runs, 100*c.PassRate,
			100*c.Threshold, c.Usage.TotalTokens, c.CostUSD, c.Duration.Round(time.Millisecond), mark)
		for _, a := range c.Assertions {
			fmt.Fprintf(tw, "  %s\t%d/%d\t%.0f%%\t\t\t\t\t\n", a.Name, a.Passed, c.Runs, 100*float64(a.Passed)/float64(c.Runs))
			if a.Failure != "" {
				failures = append(failures, fmt.Sprintf("%s: %s: %s", c.Name, a.Name, a.Failure))
			}
		}
		for _, e := range c.Errors {
			failures = append(failures, fmt.Sprintf("%s: the agent failed: %s\n", c.Name, e))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, f := range failures {
		if _, err := fmt.Fprintf(w, "\n%s", f); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(r)
}

// Assert logs the report's table on tb and fails it for each case below
// its threshold.
func (r *Report) Assert(tb TB) {
	tb.Helper()
	var b strings.Builder
	_ = r.WriteTable(&b) // a strings.Builder does not fail
	tb.Log("\n" + b.String())
	for _, c := range r.Cases {
		if !c.OK {
			tb.Errorf("evaltest: case %s: passed %d of %d runs (%.0f%%), below the threshold of %.0f%%", c.Name, c.Passed, c.Runs, 100*c.PassRate, 100*c.Threshold)
		}
	}
}

// The JUnit XML of WriteJUnit, in the de-facto schema Jenkins and GitLab
// read: a testsuite per dataset, a testcase per case.
type (
	junitSuites struct {
		XMLName xml.Name     `xml:"testsuites"`
		Suites  []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Time     string      `xml:"time,attr"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitFailure `xml:"failure"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
)

// WriteJUnit writes the report as JUnit XML, for CI systems: a testcase per
// case, failed when it is below its threshold, its failures in the body.
func (r *Report) WriteJUnit(w io.Writer) error {
	s := junitSuite{Name: r.Dataset, Tests: len(r.Cases)}
	var total time.Duration
	for _, c := range r.Cases {
		total += c.Duration
		jc := junitCase{Name: c.Name, Classname: r.Dataset, Time: seconds(c.Duration),
			SystemOut: fmt.Sprintf("passed %d of %d runs; %d tokens; $%.4f", c.Passed, c.Runs, c.Usage.TotalTokens, c.CostUSD)}
		if !c.OK {
			s.Failures++
			jc.Failure = &junitFailure{
				Message: fmt.Sprintf("passed %d of %d runs (%.0f%%), below the threshold of %.0f%%", c.Passed, c.Runs, 100*c.PassRate, 100*c.Threshold),
				Type:    "threshold", Text: failuresOf(c),
			}
		}
		s.Cases = append(s.Cases, jc)
	}
	s.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	e := xml.NewEncoder(w)
	e.Indent("", "  ")
	if err := e.Encode(junitSuites{Suites: []junitSuite{s}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

func failuresOf(c *CaseReport) string {
	var b strings.Builder
	for _, a := range c.Assertions {
		if a.Failure != "" {
			fmt.Fprintf(&b, "%s (%d/%d): %s\n", a.Name, a.Passed, c.Runs, a.Failure)
		}
	}
	for _, e := range c.Errors {
		fmt.Fprintf(&b, "the agent failed: %s\n", e)
	}
	return b.String()
}
