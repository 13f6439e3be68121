package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/trace"
	"github.com/tooluse/bedrock/tools"
)

// answerQuestion asks the user, at the terminal, the question of a call
// (an MCP server's elicitation): answer it with the form of its schema's
// fields, decline it or cancel it. An answer that breaks the schema is
// shown why and asked again; nothing is sent before it fits. With no
// terminal the call pauses under -session, for a later run at a terminal
// to answer, and is cancelled without one. The server's text is
// untrusted: it is shown through the printable filter.
func (ss *session) answerQuestion(ctx context.Context, stdin io.Reader, call converse.Call) converse.Decision {
	q := call.Question
	ss.print.EndText()
	// The prompt starts afresh and quotes the tool's name, as the
	// approval's does, so that the server's message cannot imitate it.
	prompt := fmt.Sprintf("%s asks: %s [a]nswer, [d]ecline or [c]ancel? ", strconv.Quote(call.Tool), trace.Printable(q.Message))
	for {
		choice, asked, ok := ss.ask(ctx, stdin, prompt)
		switch {
		case !asked && ss.s.session != "":
			return converse.Decision{ID: call.ID, Verdict: converse.Paused}
		case !asked, !ok:
			return call.Dismiss()
		}
		switch strings.ToLower(strings.TrimSpace(choice)) {
		case "d", "decline":
			return call.Decline()
		case "c", "cancel":
			return call.Dismiss()
		case "a", "answer":
			if answer, ok := ss.fillForm(ctx, stdin, q); ok {
				return call.Accept(answer)
			}
			return call.Dismiss()
		}
	}
}

// fillForm asks for the fields of q's schema, one line each, until the
// answer fits the schema; ok is false when the terminal ended first.
func (ss *session) fillForm(ctx context.Context, stdin io.Reader, q *tools.Question) (json.RawMessage, bool) {
	fields := formFields(q.Schema)
	for {
		answer := map[string]any{}
		for _, f := range fields {
			line, _, ok := ss.ask(ctx, stdin, f.label())
			if !ok {
				return nil, false
			}
			if v, set := f.value(strings.TrimSpace(line)); set {
				answer[f.name] = v
			}
		}
		b, _ := json.Marshal(answer) // strings, numbers and booleans: cannot fail
		err := q.Check(b)
		if err == nil {
			return b, true
		}
		fmt.Fprintf(ss.print.stderr, "%s; answer again.\n", trace.Printable(err.Error()))
	}
}

// formField is a top-level property of a question's schema, as the form
// asks for it: MCP's forms hold strings, numbers, integers and booleans.
type formField struct {
	name     string
	schema   *jsonschema.Schema
	required bool
}

// formFields are the properties of schema, the required first, each group
// by name. A schema that cannot be read has none: the answer is {}.
func formFields(schema json.RawMessage) []formField {
	var s jsonschema.Schema
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var fields []formField
	for name, p := range s.Properties {
		fields = append(fields, formField{name: name, schema: p, required: slices.Contains(s.Required, name)})
	}
	slices.SortFunc(fields, func(a, b formField) int {
		if a.required != b.required {
			if a.required {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	return fields
}

// label is the line that asks for f: its name, title, description, type
// and choices, all of them the server's untrusted text.
func (f formField) label() string {
	var about []string
	for _, s := range []string{f.schema.Title, f.schema.Description} {
		if s != "" {
			about = append(about, s)
		}
	}
	kind := f.schema.Type
	if len(f.schema.Enum) > 0 {
		choices := make([]string, len(f.schema.Enum))
		for i, v := range f.schema.Enum {
			choices[i] = fmt.Sprint(v)
		}
		kind = "one of " + strings.Join(choices, ", ")
	} else if kind == "boolean" {
		kind = "y or n"
	}
	if kind != "" {
		about = append(about, kind)
	}
	if f.required {
		about = append(about, "required")
	}
	return trace.Printable(fmt.Sprintf("  %s (%s): ", f.name, strings.Join(about, "; ")))
}

// value reads the line typed for f as its type; an empty line leaves the
// field out. A line that is not of the type stays a string, for the
// schema check to name.
func (f formField) value(line string) (any, bool) {
	if line == "" {
		return nil, false
	}
	switch f.schema.Type {
	case "integer", "number":
		var n json.Number
		if json.Unmarshal([]byte(line), &n) == nil {
			return n, true
		}
	case "boolean":
		switch strings.ToLower(line) {
		case "y", "yes", "true":
			return true, true
		case "n", "no", "false":
			return false, true
		}
	}
	return line, true
}
