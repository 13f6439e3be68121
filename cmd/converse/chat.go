package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/tooluse/bedrock/internal/shown"
)

// maxLine bounds one chat message.
const maxLine = 1 << 20

// chat reads messages from in, one a line, and sends each in turn in the
// same conversation until in ends. A failed message is reported and the
// chat goes on, with the history as it was before that message; only an
// interruption ends it early.
func (ss *session) chat(ctx context.Context, in io.Reader) error {
	stderr := ss.print.stderr
	fmt.Fprintf(stderr, "Chatting with %s: one message a line; end with Ctrl-D.\n", shown.Printable(ss.model))
	lines := readLines(in)
	ss.lines = lines
	for {
		fmt.Fprint(stderr, "> ")
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			fmt.Fprintln(stderr)
			return explain(ctx.Err(), ss.where)
		case line, ok = <-lines:
		}
		if !ok {
			fmt.Fprintln(stderr)
			return nil
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if err := ss.send(ctx, line); err != nil {
			if ctx.Err() != nil {
				return err
			}
			report(stderr, err)
		}
	}
}

// readLines delivers the lines of r on a channel, closed at the end of r,
// so that chat can stop waiting for a line when it is interrupted. A line
// longer than maxLine ends the input.
func readLines(r io.Reader) <-chan string {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), maxLine)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}
