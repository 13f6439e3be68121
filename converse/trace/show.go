package trace

// How a trace shows text that models, tools and servers control: on one
// line, capped, with no character a terminal would act on.

import (
	"fmt"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxRunes bounds a tool input or output in a trace line, in runes.
const MaxRunes = 300

// Short makes s one line of at most MaxRunes runes, each run of white space
// one space, as Printable shows it. It reads no more of s than it shows,
// however long s is.
func Short(s string) string {
	out := make([]rune, 0, min(len(s), MaxRunes+1))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, r)
		if len(out) > MaxRunes {
			out = append(out[:MaxRunes-1], '…')
			break
		}
	}
	return Printable(string(out))
}

// Printable returns s as it is if every character prints, else quoted as
// strconv.Quote does. So no control character (such as the ESC of an ANSI
// escape sequence) and no invalid UTF-8 reaches the terminal.
func Printable(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// count is n things, such as "1 message" or "2 messages".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// duration is d rounded as a trace shows it: to the microsecond under a
// millisecond, to 100 µs under a second, else to the millisecond.
func duration(d time.Duration) time.Duration {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond)
	case d < time.Second:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
