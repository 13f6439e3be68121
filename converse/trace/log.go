package trace

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// Handler returns a slog.Handler that writes the library's log records
// (Options.Logger) as lines of the trace, at level Info and above. A line
// reads "· warning: MSG key=value ...", each key and value on one line,
// quoted if it does not print. Records that say what an event's line says
// already are left out.
func (t *Trace) Handler() slog.Handler {
	return &handler{t: t}
}

type handler struct {
	t      *Trace
	attrs  []slog.Attr
	prefix string // the groups' names, each followed by "."
}

func (h *handler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= slog.LevelInfo
}

// shownByEvents reports whether a log record of the library says what an
// event the trace shows says already: a streaming fallback (StreamFallback), a
// call answered before its tool returned (ToolEnd.Abandoned), and that
// tool's return.
func shownByEvents(msg string) bool {
	return strings.HasSuffix(msg, "does not support tool use in streaming mode; using Converse") ||
		strings.HasPrefix(msg, "converse: tool call answered as timed out or cancelled") ||
		msg == "converse: an abandoned tool call returned"
}

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	if shownByEvents(r.Message) {
		return nil
	}
	var b strings.Builder
	b.WriteString("· ")
	switch {
	case r.Level >= slog.LevelError:
		b.WriteString("error: ")
	case r.Level >= slog.LevelWarn:
		b.WriteString("warning: ")
	}
	b.WriteString(Printable(strings.TrimPrefix(r.Message, "converse: ")))
	for _, a := range h.attrs {
		writeAttr(&b, "", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		writeAttr(&b, h.prefix, a)
		return true
	})
	b.WriteByte('\n')
	h.t.Printf("%s", b.String())
	return nil
}

// writeAttr writes " key=value", or one such pair for each attribute of a
// group.
func writeAttr(b *strings.Builder, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		for _, g := range v.Group() {
			writeAttr(b, prefix+a.Key+".", g)
		}
		return
	}
	if a.Equal(slog.Attr{}) {
		return
	}
	fmt.Fprintf(b, " %s=%s", Printable(prefix+a.Key), Printable(v.String()))
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h2 := *h
	h2.attrs = append([]slog.Attr(nil), h.attrs...)
	for _, a := range attrs {
		if h.prefix != "" {
			a.Key = h.prefix + a.Key
		}
		h2.attrs = append(h2.attrs, a)
	}
	return &h2
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.prefix += name + "."
	return &h2
}
