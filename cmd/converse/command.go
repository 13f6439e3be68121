package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// command is one of converse's commands, in the shape of cmd/go's
// base.Command: the words that call it, its usage, the flags it takes and
// what it runs.
type command struct {
	// name is the first word that calls the command; "" for the default
	// command, which takes a prompt.
	name string
	// usageLine is the first line of the command's -h.
	usageLine string
	// short is the command's line in converse -h.
	short string
	// long is what the command's -h says before its flags.
	long string
	// more, if not nil, is what the command's -h says after its flags.
	more func() string
	// flags registers on fs the flags the command takes, bound to s. Nil:
	// the command parses its own arguments, so run gets no settings.
	flags func(s *settings, fs *flag.FlagSet)
	// refused are flags of other commands this one does not take, with the
	// reason its usage error gives.
	refused []refusal
	// checks reject values and combinations of the flags that cannot work.
	checks []func(*settings) error
	// calledBy reports whether a command line, with the command's name
	// first, calls the command; nil: any does.
	calledBy func(args []string) bool
	// run runs the command.
	run func(ctx context.Context, inv *invocation) error
}

// refusal is a flag a command does not take, and why.
type refusal struct{ flag, why string }

// invocation is a command as it was called: its settings, arguments and
// standard files.
type invocation struct {
	s      *settings // the parsed flags; nil for a command that parses its own
	args   []string  // the words after the command's name, those of its flags included
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer // made visible on a terminal, and redacted
	tty    io.Writer // standard error as it is, where the chat's line editor writes
}

// commands are converse's commands, the default one first, in the order
// converse -h lists them.
var commands = []*command{promptCommand, toolsCommand, viewCommand, serveCommand, evalCommand, helpCommand}

// viewCommand is converse view, whose flags view parses.
var viewCommand = &command{
	name:      "view",
	usageLine: "converse view [-o FILE] [-price IN,OUT[,READ,WRITE]] INPUT",
	short:     "a -session file, a -record recording or -json output as an HTML transcript (converse help view)",
	calledBy:  isView,
	run: func(ctx context.Context, inv *invocation) error {
		return view(ctx, inv.args, inv.stdout, inv.stderr)
	},
}

// evalCommand is converse eval, whose flags runEval parses. It is given
// standard error as it is: runEval makes it visible and redacted itself,
// and needs to know whether it is a terminal for its progress line.
var evalCommand = &command{
	name:      "eval",
	usageLine: evalUsage,
	short:     "run a dataset of cases against the agent: pass rates, JUnit XML (converse help eval)",
	run: func(ctx context.Context, inv *invocation) error {
		return runEval(ctx, inv.args, inv.stdout, inv.tty)
	},
}

// helpCommand is converse help [TOPIC]. A longer command line starting
// with "help" is a prompt.
var helpCommand = &command{
	name:      "help",
	usageLine: "converse help [TOPIC]",
	short:     "the help topics, and the text of one",
	calledBy:  func(args []string) bool { return len(args) <= 2 },
	run: func(_ context.Context, inv *invocation) error {
		return printHelp(inv.stdout, inv.args)
	},
}

// run is the whole of converse: main only adds the process's signals and
// exit status. It picks the command of args and runs it. Results go to
// stdout; diagnostics and the -v trace to stderr. A returned usageError
// means exit status 2.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	// What reaches a terminal is made visible; stderr is redacted first.
	inv := &invocation{stdin: stdin, stdout: onTerminal(stdout), stderr: redacting{onTerminal(stderr)}, tty: stderr}
	c, rest := pick(args)
	inv.args = rest
	if c.flags == nil {
		return c.run(ctx, inv)
	}
	s, err := c.parse(rest, inv.stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	s.diagnostics = inv.stderr
	inv.s = s
	return c.run(ctx, inv)
}

// pick returns the command that args call, and the arguments after its
// name: the default command's are all of args.
func pick(args []string) (*command, []string) {
	if len(args) > 0 {
		for _, c := range commands[1:] {
			if args[0] == c.name && (c.calledBy == nil || c.calledBy(args)) {
				return c, args[1:]
			}
		}
	}
	return commands[0], args
}

// parse parses the command's flags in args into new settings and checks
// them. -h prints the command's usage on stdout and returns flag.ErrHelp;
// any other mistake is a usageError.
func (c *command) parse(args []string, stdout io.Writer) (*settings, error) {
	s := &settings{set: map[string]bool{}}
	fs := flag.NewFlagSet(c.usageLine, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by report
	c.flags(s, fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.printUsage(stdout, fs)
			return nil, err
		}
		return nil, c.flagError(err)
	}
	fs.Visit(func(f *flag.Flag) { s.set[f.Name] = true })
	s.prompt = fs.Args()
	if err := flagAfterPrompt(fs, args); err != nil {
		return nil, err
	}
	for _, check := range c.checks {
		if err := check(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// flagError is the usage error of a flag the command could not parse: a
// flag it refuses says why.
func (c *command) flagError(err error) error {
	name, undefined := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	for _, r := range c.refused {
		if undefined && name == r.flag {
			return usagef("-%s is not for %s: %s", r.flag, c.name, r.why)
		}
	}
	return usagef("%v (run %s -h for usage)", err, strings.TrimSpace("converse "+c.name))
}

// printUsage prints the command's -h: its usage line and text, the
// default command's the other commands too, and its flags.
func (c *command) printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: %s\n\n%s", c.usageLine, c.long)
	if c.name == "" {
		printCommands(w)
	}
	fmt.Fprint(w, "\nFlags:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
	if c.more != nil {
		fmt.Fprint(w, c.more())
	}
}

// printCommands lists the commands other than the default one.
func printCommands(w io.Writer) {
	fmt.Fprint(w, "\nCommands:\n")
	for _, c := range commands[1:] {
		fmt.Fprintf(w, "  %s\n        %s\n", c.usageLine, c.short)
	}
}
