package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/evaltest"
	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/converse/trace"
)

const evalUsage = "converse eval [-model ID] [-replay FILE | -endpoint URL] [-record FILE] [-tools FILE] [-runs N] [-junit FILE] [-json FILE] [-update] DATASET"

// evalFlags are the command line of converse eval.
type evalFlags struct {
	s           settings // what the agent's backend and tools are built from
	runs        int
	junit, json string
	update      bool
	dataset     string
}

// runEval is converse eval: it runs the cases of DATASET against the
// agent (the configured model and tools), prints the table of pass rates,
// and fails below a case's threshold (converse help eval).
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// What models and tools said reaches a terminal made visible, and
	// standard error redacted, as in run.
	tty := isTerminal(stderr)
	stdout, stderr = onTerminal(stdout), redacting{onTerminal(stderr)}
	e, err := parseEvalFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	ds, err := evaltest.LoadDataset(e.dataset)
	if err != nil {
		return usagef("eval: %w", err)
	}
	if e.runs > 0 {
		ds.Runs = e.runs
		for i := range ds.Cases {
			ds.Cases[i].Runs = 0
		}
	}
	// The agent's spans go where OTEL_EXPORTER_OTLP_ENDPOINT says, in the
	// trace of TRACEPARENT if it is set, as those of a prompt do.
	flush, err := setupTelemetry(ctx, stderr)
	if err != nil {
		return err
	}
	defer func() { _ = flush(ctx) }()
	ctx = withTraceParent(ctx)
	calls := &running{}
	defer calls.wait() // no program of a tool outlives converse
	r, finish, err := e.runner(ctx, ds, calls, stderr)
	if err != nil {
		return err
	}
	r.Progress = progress(stderr, tty)
	rep, err := r.Run(ctx, ds)
	if tty {
		fmt.Fprint(stderr, "\r\x1b[K") // the progress line goes
	}
	if ferr := finish(); err == nil {
		err = ferr
	}
	if err != nil {
		if errors.Is(err, evaltest.ErrDataset) {
			return usagef("eval: %s: %w", e.dataset, err)
		}
		return fmt.Errorf("eval: %w", err)
	}
	return e.report(rep, stdout)
}

func parseEvalFlags(args []string, stdout io.Writer) (*evalFlags, error) {
	e := &evalFlags{s: settings{set: map[string]bool{}, maxTurns: converse.DefaultMaxTurns}}
	fs := flag.NewFlagSet("converse eval", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by report
	fs.StringVar(&e.s.model, "model", "", "the agent's model `ID` (default $BEDROCK_MODEL_ID, else "+defaultModel+")")
	fs.StringVar(&e.s.region, "region", "", "AWS `region`")
	fs.StringVar(&e.s.profile, "profile", "", "AWS shared config `profile`")
	fs.StringVar(&e.s.endpoint, "endpoint", "", "custom Bedrock Runtime endpoint `URL`, for the agent, the judge and the user")
	fs.StringVar(&e.s.replay, "replay", "", "offline: answer the agent's model calls from the recording `FILE`, run after run")
	fs.StringVar(&e.s.record, "record", "", "record the agent's model calls to `FILE`, for -replay")
	fs.StringVar(&e.s.toolsFile, "tools", "", "add the tools of the manifest `FILE` (converse help manifest)")
	fs.BoolVar(&e.s.noBuiltins, "no-builtins", false, "leave out the built-in tools")
	fs.IntVar(&e.s.maxTurns, "max-turns", converse.DefaultMaxTurns, "allow the agent `N` model calls per message")
	e.s.callFlags(fs)
	fs.IntVar(&e.runs, "runs", 0, "run every case `N` times, whatever the dataset says")
	fs.StringVar(&e.junit, "junit", "", "write the report as JUnit XML to `FILE`, for CI")
	fs.StringVar(&e.json, "json", "", "write the report as JSON to `FILE`")
	fs.BoolVar(&e.update, "update", false, "record the judge's and the user's model calls anew, instead of replaying their recordings")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "usage: %s\n\nconverse help eval describes the dataset.\n\n", evalUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
		}
		return nil, usagef("eval: %w (usage: %s)", err, evalUsage)
	}
	fs.Visit(func(f *flag.Flag) { e.s.set[f.Name] = true })
	switch {
	case fs.NArg() != 1:
		return nil, usagef("eval: want one DATASET file, got %d arguments (usage: %s)", fs.NArg(), evalUsage)
	case e.s.replay != "" && e.s.endpoint != "":
		return nil, usagef("eval: -replay and -endpoint cannot be used together: a replay is its own endpoint")
	case e.s.replay != "" && e.s.record != "":
		return nil, usagef("eval: -replay and -record cannot be used together")
	}
	if err := e.s.checkCalls(); err != nil {
		return nil, err
	}
	e.dataset = fs.Arg(0)
	return e, nil
}

// runner builds the Runner of the dataset: the agent's conversations on
// its backend, the judge and the simulated user on theirs. finish saves or
// checks the recordings.
func (e *evalFlags) runner(ctx context.Context, ds *evaltest.Dataset, calls *running, stderr io.Writer) (*evaltest.Runner, func() error, error) {
	rec, err := loadReplay(e.s.replay)
	if err != nil {
		return nil, nil, err
	}
	reg, err := registry(&e.s, calls, newFunctions(&e.s, stderr))
	if err != nil {
		return nil, nil, err
	}
	b, err := newBackend(ctx, &e.s, rec)
	if err != nil {
		return nil, nil, err
	}
	var first string
	if rec != nil && len(rec.Exchanges) > 0 {
		first = rec.Exchanges[0].ModelID
	}
	model := e.s.modelID(first)
	r := &evaltest.Runner{}
	for _, t := range reg.Tools() {
		r.Tools = append(r.Tools, t.Name())
	}
	r.Agent = func(context.Context) (*converse.Conversation, error) {
		return converse.New(b.client, model, reg, func(o *converse.Options) { e.s.conversationOptions(o, model) }), nil
	}
	var finishers []func() error
	if e.s.record != "" {
		finishers = append(finishers, func() error { return b.save(e.s.record) })
	}
	for _, m := range []struct {
		file *evaltest.ModelFile
		set  func(converse.Client, string)
	}{
		{ds.Judge, func(c converse.Client, id string) { r.Judge = &evaltest.Judge{Client: c, Model: id} }},
		{ds.User, func(c converse.Client, id string) { r.User = &evaltest.User{Client: c, Model: id} }},
	} {
		if m.file == nil {
			continue
		}
		client, finish, err := e.modelClient(ctx, m.file)
		if err != nil {
			b.close()
			return nil, nil, err
		}
		m.set(client, m.file.Model)
		finishers = append(finishers, finish)
	}
	return r, func() error {
		defer b.close()
		var errs []error
		for _, f := range finishers {
			errs = append(errs, f())
		}
		return errors.Join(errs...)
	}, nil
}

// modelClient is the client of a judge or a user: its recording replayed,
// or, with -update or none yet, Bedrock (or -endpoint) recorded.
func (e *evalFlags) modelClient(ctx context.Context, m *evaltest.ModelFile) (converse.Client, func() error, error) {
	live := func() (*bedrockruntime.Client, error) {
		s := e.s
		s.replay, s.record = "", ""
		b, err := newBackend(ctx, &s, nil)
		if err != nil {
			return nil, err
		}
		return b.client, nil
	}
	if m.Recording == "" {
		c, err := live()
		return c, func() error { return nil }, err
	}
	if _, err := os.Stat(m.Recording); err != nil && e.s.replay != "" && !e.update {
		return nil, nil, usagef("eval: %s is missing, and -replay is offline: record it once without -replay", m.Recording)
	}
	if err := recordedModel(m, e.update); err != nil {
		return nil, nil, err
	}
	c, finish, err := evaltest.Recorded(m.Recording, e.update, live)
	if err != nil {
		return nil, nil, usagef("eval: %w", err)
	}
	return c, finish, nil
}

// recordedModel checks, before any model call, that the recording of m
// was made with m's model: a replay would fail at the first call.
func recordedModel(m *evaltest.ModelFile, update bool) error {
	rec, err := recording.Load(m.Recording)
	if update || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return usagef("eval: %w", err)
	}
	for i, ex := range rec.Exchanges {
		if ex.ModelID != m.Model {
			return usagef("eval: %s: exchange %d: modelId %q, where the dataset's model is %q: record it anew with -update",
				m.Recording, i+1, ex.ModelID, m.Model)
		}
	}
	return nil
}

// progress writes a line for each run: on a terminal (tty), one line
// redrawn.
func progress(stderr io.Writer, tty bool) func(c *evaltest.Case, run, done, total int) {
	return func(c *evaltest.Case, run, done, total int) {
		line := fmt.Sprintf("eval: %d/%d: %s, run %d", done+1, total, trace.Printable(c.Name), run)
		if tty {
			fmt.Fprintf(stderr, "\r\x1b[K%s", line)
			return
		}
		fmt.Fprintln(stderr, line)
	}
}

// report prints the table, writes the files asked for, and fails below a
// threshold.
func (e *evalFlags) report(rep *evaltest.Report, stdout io.Writer) error {
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	for _, f := range []struct {
		path  string
		write func(io.Writer) error
	}{{e.json, rep.WriteJSON}, {e.junit, rep.WriteJUnit}} {
		if f.path == "" {
			continue
		}
		if err := writeFile(f.path, f.write); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
	}
	failed := 0
	for _, c := range rep.Cases {
		if !c.OK {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("eval: %d of %d cases below their threshold", failed, len(rep.Cases))
	}
	return nil
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600) // a report quotes the conversations
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
