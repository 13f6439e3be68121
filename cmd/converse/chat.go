package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"golang.org/x/term"

	"github.com/tooluse/bedrock/converse/trace"
)

// chatHelp is what /help shows.
const chatHelp = `Commands:
  /tools        the tools offered, where each comes from
  /history      the conversation so far
  /save FILE    the conversation's state as JSON (converse help session)
  /reset        a new conversation (not with -session)
  /help         this
  /exit         leave (or Ctrl-D, or Ctrl-C twice at an empty prompt)
  //TEXT        sends /TEXT
Keys: Left, Right, Home, End, Alt-Left and Alt-Right move; Ctrl-W deletes a
word, Ctrl-U the line; Up and Down go through the history; a pasted block
of lines is one message, sent with Enter. Ctrl-C during a turn cancels it.
`

// chat reads messages at the terminal in, the line editor's output going to
// tty, and sends each in turn in the same conversation. A failed message is
// reported and the chat goes on. A Ctrl-C during a turn cancels that turn
// only: the model call or the running tools, whose programs are ended before
// the prompt returns. The chat then goes on with every completed exchange
// kept. Ctrl-D, /exit or Ctrl-C twice at the prompt leave; an interruption
// from outside (SIGTERM) ends the chat.
func (ss *session) chat(ctx context.Context, in io.Reader, tty io.Writer) error {
	stderr := ss.print.stderr
	fmt.Fprintf(stderr, "Chatting with %s: Ctrl-C cancels a turn, Ctrl-D leaves; /help lists the commands.\n", trace.Printable(ss.model))
	fd := int(in.(interface{ Fd() uintptr }).Fd()) // a terminal, which readPrompt checked
	if state, err := term.GetState(fd); err == nil {
		defer term.Restore(fd, state) // however the chat ends, a read in progress too
	}
	ss.lines, ss.term = newLineReader(fd, in, tty, loadHistory(historyPath())), tty
	defer ss.lines.close()
	ctrlC := false
	for {
		line, err := ss.lines.readLine(ctx, "> ")
		switch {
		case errors.Is(err, errCtrlC) && !ctrlC:
			ctrlC = true
			fmt.Fprintln(stderr, "(Ctrl-C again, Ctrl-D or /exit leaves)")
			continue
		case errors.Is(err, errCtrlC), errors.Is(err, io.EOF):
			return nil
		case ctx.Err() != nil:
			// Off the prompt's line, for the report that follows.
			ss.lines.endLine()
			return explain(ctx.Err(), ss.where)
		case err != nil:
			return fmt.Errorf("reading the terminal: %w", err)
		}
		ctrlC = false
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "//"):
			line = line[1:]
		case strings.HasPrefix(line, "/"):
			exit, err := ss.command(ctx, line)
			if exit {
				return nil
			}
			if err != nil {
				report(stderr, err)
			}
			continue
		}
		if err := ss.turn(ctx, line); err != nil {
			return err
		}
	}
}

// turn sends one message of the chat: it returns an error only when the
// chat must end.
func (ss *session) turn(ctx context.Context, prompt string) error {
	turnCtx, end := turnContext(ctx)
	ss.cancelTurn = func() { end(errCtrlCStop) }
	defer func() { ss.cancelTurn = nil }()
	err := ss.sendInChat(turnCtx, prompt)
	end(nil)
	ss.calls.wait() // a cancelled call's program is gone before the prompt returns
	switch {
	case ctx.Err() != nil:
		return err
	case turnCtx.Err() != nil && errors.Is(err, context.Canceled):
		// The task ends here: the next prompt goes to the model at once,
		// with the stopped calls' results.
		if err := ss.conv.Stop(ctx); err != nil {
			report(ss.print.stderr, err)
			return nil
		}
		fmt.Fprintln(ss.print.stderr, "converse: task stopped; what was completed is kept")
	case err != nil:
		report(ss.print.stderr, err)
	}
	return nil
}

// sendInChat sends prompt. A task a failure left open (interrupted, or
// restored so from -session) is stopped first: the user moved on, and the
// model hears of its calls with the new prompt, in one request.
func (ss *session) sendInChat(ctx context.Context, prompt string) error {
	if err := ss.conv.Stop(ctx); err != nil {
		return err
	}
	return ss.send(ctx, prompt)
}

// command runs a chat command; exit is true for /exit.
func (ss *session) command(ctx context.Context, line string) (exit bool, err error) {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/exit", "/quit":
		return true, nil
	case "/help":
		fmt.Fprint(ss.print.stderr, chatHelp)
	case "/tools":
		return false, ss.listTools(ss.stdout)
	case "/history":
		ss.history(ss.stdout)
	case "/save":
		return false, ss.save(arg)
	case "/reset":
		if ss.reset == nil {
			return false, errors.New("/reset: the -session keeps this conversation; start converse with another -session for a new one")
		}
		ss.conv = ss.reset()
		fmt.Fprintln(ss.print.stderr, "A new conversation.")
	default:
		return false, fmt.Errorf("unknown command %s: /help lists them; //TEXT sends /TEXT", trace.Short(name))
	}
	return false, nil
}

// history shows the conversation so far, a line a block: text, tool calls
// and their results, shortened.
func (ss *session) history(w io.Writer) {
	for _, m := range ss.conv.History() {
		for _, b := range m.Content {
			switch b := b.(type) {
			case *types.ContentBlockMemberText:
				fmt.Fprintf(w, "%s: %s\n", m.Role, trace.Short(b.Value))
			case *types.ContentBlockMemberToolUse:
				fmt.Fprintf(w, "%s: → %s %s\n", m.Role, trace.Printable(aws.ToString(b.Value.Name)), trace.Printable(aws.ToString(b.Value.ToolUseId)))
			case *types.ContentBlockMemberToolResult:
				fmt.Fprintf(w, "%s: ← %s %s\n", m.Role, trace.Printable(aws.ToString(b.Value.ToolUseId)), b.Value.Status)
			}
		}
	}
}

// save writes the conversation's state, as a -session file holds it, to
// path.
func (ss *session) save(path string) error {
	if path == "" {
		return errors.New("/save FILE: name the file")
	}
	b, err := ss.conv.State().MarshalJSON()
	if err != nil {
		return fmt.Errorf("/save: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("/save: %w", err)
	}
	fmt.Fprintf(ss.print.stderr, "Saved %s to %s.\n", plural(len(ss.conv.History()), "message"), trace.Printable(path))
	return nil
}
