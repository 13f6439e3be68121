package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// resetLine starts the approval prompt. It resets the terminal's attributes:
// text the model concealed with ESC[8m, or coloured, ends there. It goes back
// to the start of the line and clears it, so that nothing shown before can
// stand beside or hide the question.
const resetLine = "\x1b[0m\r\x1b[K"

// onTerminal returns w as converse writes to it. When w is a terminal, every
// Write is made visible (see visible). What goes there (the model's text,
// tools' output, MCP servers' messages and standard error, the -v trace) is
// not converse's to trust. A file or pipe gets the bytes as they are.
func onTerminal(w io.Writer) io.Writer {
	if isTerminal(w) {
		return visibleWriter{w}
	}
	return w
}

// visibleWriter writes what it is given through visible.
type visibleWriter struct{ w io.Writer }

func (v visibleWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(v.w, visible(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// visible returns s with every character a terminal would act on instead of
// showing made visible. Untrusted text then cannot move the cursor, clear the
// screen, conceal or recolour what follows, set the window title or the
// clipboard (OSC 0, OSC 52) or reorder a line. C0 controls and DEL are shown
// in caret notation (ESC is "^[", CR "^M", DEL "^?"), except newline and tab.
// C1 controls (U+0080 to U+009F, CSI among them) and the bidirectional
// formatting characters are shown as \u escapes. Bytes that are not UTF-8 are
// shown as \x escapes. Text with none of them is returned as it is.
func visible(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for s != "" {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case !isControl(r):
			b.WriteString(s[:size])
		case r < 0x20:
			b.WriteByte('^')
			b.WriteByte(byte(r) + '@')
		case r == 0x7f:
			b.WriteString("^?")
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		s = s[size:]
	}
	return b.String()
}

// isControl reports whether a terminal acts on r instead of showing it,
// newline and tab aside.
func isControl(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	}
	return isBidi(r)
}

// isBidi reports whether r is one of the bidirectional formatting
// characters: the marks, embeddings, overrides and isolates, which can
// reorder how the text around them is shown (Trojan Source).
func isBidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// bidiVisible returns s with each bidirectional formatting character as a
// \u escape, as visible shows it on a terminal.
func bidiVisible(s string) string {
	if !strings.ContainsFunc(s, isBidi) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isBidi(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
