package tools

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// strftime formats t as C's strftime and Python's time.strftime do in the C
// locale, which is what models write. It supports the glibc '-' flag (%-d,
// %-I) that drops padding. An unknown directive is an error that names it.
func strftime(t time.Time, format string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		i++
		unpadded := i < len(format) && format[i] == '-'
		if unpadded {
			i++
		}
		if i == len(format) {
			return "", fmt.Errorf("incomplete directive %q at the end of the format", format[strings.LastIndexByte(format, '%'):])
		}
		s, ok := directive(t, format[i])
		if !ok {
			r, _ := utf8.DecodeRuneInString(format[i:])
			flag := ""
			if unpadded {
				flag = "-"
			}
			return "", fmt.Errorf("unknown directive %q", "%"+flag+string(r))
		}
		if unpadded {
			s = unpad(s)
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// directive returns the text for one conversion character.
func directive(t time.Time, c byte) (string, bool) {
	switch c {
	case 'a':
		return t.Weekday().String()[:3], true
	case 'A':
		return t.Weekday().String(), true
	case 'b', 'h':
		return t.Month().String()[:3], true
	case 'B':
		return t.Month().String(), true
	case 'c':
		return expand(t, "%a %b %e %H:%M:%S %Y"), true
	case 'C':
		return pad(t.Year()/100, 2, '0'), true
	case 'd':
		return pad(t.Day(), 2, '0'), true
	case 'D', 'x':
		return expand(t, "%m/%d/%y"), true
	case 'e':
		return pad(t.Day(), 2, ' '), true
	case 'f':
		return pad(t.Nanosecond()/1000, 6, '0'), true
	case 'F':
		return expand(t, "%Y-%m-%d"), true
	case 'G':
		year, _ := t.ISOWeek()
		return strconv.Itoa(year), true
	case 'g':
		year, _ := t.ISOWeek()
		return pad(year%100, 2, '0'), true
	case 'H':
		return pad(t.Hour(), 2, '0'), true
	case 'I':
		return pad(hour12(t), 2, '0'), true
	case 'j':
		return pad(t.YearDay(), 3, '0'), true
	case 'k':
		return pad(t.Hour(), 2, ' '), true
	case 'l':
		return pad(hour12(t), 2, ' '), true
	case 'm':
		return pad(int(t.Month()), 2, '0'), true
	case 'M':
		return pad(t.Minute(), 2, '0'), true
	case 'n':
		return "\n", true
	case 'p':
		if t.Hour() < 12 {
			return "AM", true
		}
		return "PM", true
	case 'r':
		return expand(t, "%I:%M:%S %p"), true
	case 'R':
		return expand(t, "%H:%M"), true
	case 's':
		return strconv.FormatInt(t.Unix(), 10), true
	case 'S':
		return pad(t.Second(), 2, '0'), true
	case 't':
		return "\t", true
	case 'T', 'X':
		return expand(t, "%H:%M:%S"), true
	case 'u':
		return strconv.Itoa((int(t.Weekday())+6)%7 + 1), true
	case 'U': // week of the year, weeks starting on Sunday
		return pad((t.YearDay()+6-int(t.Weekday()))/7, 2, '0'), true
	case 'V':
		_, week := t.ISOWeek()
		return pad(week, 2, '0'), true
	case 'w':
		return strconv.Itoa(int(t.Weekday())), true
	case 'W': // week of the year, weeks starting on Monday
		return pad((t.YearDay()+6-(int(t.Weekday())+6)%7)/7, 2, '0'), true
	case 'y':
		return pad(t.Year()%100, 2, '0'), true
	case 'Y':
		return strconv.Itoa(t.Year()), true
	case 'z':
		return t.Format("-0700"), true
	case 'Z':
		return t.Format("MST"), true
	case '%':
		return "%", true
	}
	return "", false
}

// expand formats one of the composite directives, whose expansions hold only
// known directives.
func expand(t time.Time, format string) string {
	s, _ := strftime(t, format)
	return s
}

func hour12(t time.Time) int {
	if h := t.Hour() % 12; h != 0 {
		return h
	}
	return 12
}

// pad writes n in at least width digits, padded on the left with fill.
func pad(n, width int, fill byte) string {
	s := strconv.Itoa(n)
	if len(s) >= width {
		return s
	}
	return strings.Repeat(string(fill), width-len(s)) + s
}

// unpad drops the padding of a number, keeping a lone zero.
func unpad(s string) string {
	trimmed := strings.TrimLeft(s, "0 ")
	if trimmed == "" && s != "" {
		return "0"
	}
	return trimmed
}
