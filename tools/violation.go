package tools

import (
	"errors"
	"fmt"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// jsonschema-go stops at the first violation and words it for programmers:
//
//	validating root: validating /properties/a: type: x has type "string", want "number"
//
// explain rewords that for a model, and validates again without each
// offending property to report the others too:
//
//	property "a": want number, got string; missing required property "b"
func (t *Tool) explain(instance map[string]any, first error) string {
	var (
		props   = map[string]string{} // top-level property → what is wrong with it
		extra   []string
		missing []string
		other   string
	)
	work := maps.Clone(instance)
	for err := first; err != nil; err = t.resolved.Validate(work) {
		v := t.named(parseViolation(err), work, err)
		before := len(work)
		switch {
		case len(v.path) > 0 && v.path[0].name != "" && hasKey(work, v.path[0].name):
			props[v.path[0].name] = v.String()
			delete(work, v.path[0].name)
		case len(v.path) == 0 && v.extra != nil:
			extra = append(extra, v.extra...)
			for _, name := range v.extra {
				delete(work, name)
			}
		case len(v.path) == 0 && v.missing != nil:
			// A property reported above was removed from work, so the
			// validator now misses it: it is not missing from the input.
			for _, name := range v.missing {
				if !hasKey(instance, name) {
					missing = append(missing, name)
				}
			}
		default:
			other = v.String()
		}
		if len(work) == before {
			break // only removing a property lets the validator get further
		}
	}

	var parts []string
	for _, name := range slices.Sorted(maps.Keys(props)) {
		parts = append(parts, props[name])
	}
	if len(extra) > 0 {
		parts = append(parts, plural(extra, "unexpected property", "unexpected properties"))
	}
	if len(missing) > 0 {
		parts = append(parts, plural(missing, "missing required property", "missing required properties"))
	}
	if other != "" {
		parts = append(parts, other)
	}
	if len(parts) == 0 { // cannot happen: first is a violation
		return cleanText(first.Error())
	}
	return strings.Join(parts, "; ")
}

// maxCulpritSearch bounds the properties culprit leaves out one by one:
// each costs a validation.
const maxCulpritSearch = 64

// named puts in v's path the property that a violation of
// additionalProperties or patternProperties is about, which jsonschema-go
// does not name (the step ".*"), if culprit finds it: `property "m.k"`
// for `property "m.*"`. err is the violation, instance what was validated.
func (t *Tool) named(v violation, instance map[string]any, err error) violation {
	var object []string // the names that lead to the object
	for i, s := range v.path {
		switch {
		case s.name != "":
			object = append(object, s.name)
		case s.label == ".*":
			if name, ok := t.culprit(instance, object, err); ok {
				v.path = slices.Clone(v.path)
				v.path[i] = step{name: name}
			}
			return v
		default:
			return v // an array item: not searched
		}
	}
	return v
}

// culprit finds the property of the object at path in instance that err,
// instance's first violation, is about. It tries the object's properties
// that its schema does not declare, in order. The culprit is the one whose
// leaving out, after those before it, changes the first violation. It gives
// up on an object of more than maxCulpritSearch properties.
func (t *Tool) culprit(instance map[string]any, path []string, err error) (string, bool) {
	schema := t.resolved.Schema()
	trial := maps.Clone(instance)
	object := trial
	for _, name := range path {
		child, ok := object[name].(map[string]any)
		if !ok {
			return "", false
		}
		child = maps.Clone(child)
		object[name], object = child, child
		if schema != nil {
			schema = schema.Properties[name]
		}
	}
	if len(object) > maxCulpritSearch {
		return "", false
	}
	var declared map[string]*jsonschema.Schema
	if schema != nil {
		declared = schema.Properties
	}
	for _, name := range slices.Sorted(maps.Keys(object)) {
		if _, ok := declared[name]; ok {
			continue
		}
		delete(object, name)
		if e := t.resolved.Validate(trial); e == nil || e.Error() != err.Error() {
			return name, true
		}
	}
	return "", false
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// plural words a list of property names: `unexpected property "a"` or
// `unexpected properties "a", "b"`.
func plural(names []string, one, many string) string {
	names = slices.Clone(names)
	slices.Sort(names)
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = strconv.Quote(n)
	}
	if len(names) == 1 {
		return one + " " + quoted[0]
	}
	return many + " " + strings.Join(quoted, ", ")
}

// violation is one schema violation parsed from a jsonschema-go error.
type violation struct {
	path    []step   // where in the input, from the top
	detail  string   // what is wrong, reworded
	extra   []string // for "unexpected additional properties"
	missing []string // for "required: missing properties"
}

// step is one step into the input: a property name, or, if name is empty,
// an array item or any property, written as label.
type step struct {
	name  string
	label string
}

// String words the violation: `property "a.b": want number, got string`.
func (v violation) String() string { return v.at("property") }

// inSchema words a violation of the meta-schema by a schema, whose
// "properties" are its keywords: `at "properties.*.minLength": want at
// least 0, got -1`, where * stands for any name.
func (v violation) inSchema() string { return v.at("at") }

func (v violation) at(label string) string {
	detail := v.detail
	switch {
	case v.extra != nil:
		detail = plural(v.extra, "unexpected property", "unexpected properties")
	case v.missing != nil:
		detail = plural(v.missing, "missing required property", "missing required properties")
	}
	if len(v.path) == 0 {
		return detail
	}
	var b strings.Builder
	for i, s := range v.path {
		switch {
		case s.name == "":
			b.WriteString(s.label)
		case i > 0:
			b.WriteString("." + s.name)
		default:
			b.WriteString(s.name)
		}
	}
	return fmt.Sprintf("%s %q: %s", label, b.String(), detail)
}

// parseViolation walks the chain of "validating <schema path>: " wrappers
// that jsonschema-go puts around a violation.
func parseViolation(err error) violation {
	var schemaPaths []string
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			break
		}
		prefix, ok := strings.CutSuffix(err.Error(), inner.Error())
		if !ok || !strings.HasPrefix(prefix, "validating ") {
			break
		}
		schemaPaths = append(schemaPaths, strings.TrimSuffix(strings.TrimPrefix(prefix, "validating "), ": "))
		err = inner
	}
	msg := err.Error()
	v := violation{path: inputPath(schemaPaths), detail: reword(msg)}
	p := patterns()
	if m := p.required.FindStringSubmatch(msg); m != nil {
		v.missing = quotedStrings(m[1])
	} else if m := p.extra.FindStringSubmatch(msg); m != nil {
		v.extra = quotedStrings(m[1])
	}
	return v
}

// inputPath turns the schema paths of nested validations into a path in the
// input. A path that does not extend the previous one is a $ref to elsewhere
// in the schema, which does not move in the input.
func inputPath(schemaPaths []string) []step {
	var path []step
	prev := ""
	for _, p := range schemaPaths {
		if !strings.HasPrefix(p, "/") { // "root", or a schema named by its $id
			prev = ""
			continue
		}
		rel, ok := strings.CutPrefix(p, prev)
		prev = p
		if !ok || !strings.HasPrefix(rel, "/") {
			continue
		}
		path = append(path, schemaSteps(strings.Split(rel[1:], "/"))...)
	}
	return path
}

// schemaSteps turns JSON pointer segments of a schema path, like
// properties/list/items/properties/x, into steps in the input: list[*].x.
func schemaSteps(segs []string) []step {
	var path []step
	for i := 0; i < len(segs); i++ {
		next := ""
		if i+1 < len(segs) {
			next = segs[i+1]
		}
		switch segs[i] {
		case "properties":
			path = append(path, step{name: unescapePointer(next)})
			i++
		case "patternProperties":
			path = append(path, step{label: ".*"})
			i++
		case "additionalProperties", "unevaluatedProperties":
			path = append(path, step{label: ".*"})
		case "prefixItems":
			path = append(path, step{label: "[" + next + "]"})
			i++
		case "items":
			if _, err := strconv.Atoi(next); err == nil { // draft-07 tuple items
				path = append(path, step{label: "[" + next + "]"})
				i++
			} else {
				path = append(path, step{label: "[*]"})
			}
		case "additionalItems", "unevaluatedItems", "contains":
			path = append(path, step{label: "[*]"})
		case "allOf", "anyOf", "oneOf", "$defs", "definitions", "dependentSchemas", "dependencies":
			i++ // the index or name that follows is in the schema, not the input
		}
	}
	return path
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// violationPatterns read jsonschema-go's messages. They are compiled at the
// first invalid input, not when a program starts: most programs never see
// one.
type violationPatterns struct {
	required, extra, typ, enum, anyOf, prefix, bound, quoted *regexp.Regexp
}

var patterns = sync.OnceValue(func() *violationPatterns {
	return &violationPatterns{
		required: regexp.MustCompile(`^required: missing properties: (\[.*\])$`),
		extra:    regexp.MustCompile(`^unexpected additional properties (\[.*\])$`),
		typ:      regexp.MustCompile(`(?s)^type: .* has type "([^"]*)", want (?:"([^"]*)"|one of "([^"]*)")$`),
		enum:     regexp.MustCompile(`(?s)^enum: (.*) does not equal any of: (\[.*\])$`),
		anyOf:    regexp.MustCompile(`(?s)^anyOf: did not validate against any of .*?:\n(.*)$`),
		prefix:   regexp.MustCompile(`^(?:validating [^:]*: )+`),
		bound:    regexp.MustCompile(`^(minimum|maximum|exclusiveMinimum|exclusiveMaximum): (\S+) is [a-z ]+ (\S+)$`),
		quoted:   regexp.MustCompile(`"(?:[^"\\]|\\.)*"`),
	}
})

var boundWords = map[string]string{
	"minimum":          "at least",
	"maximum":          "at most",
	"exclusiveMinimum": "greater than",
	"exclusiveMaximum": "less than",
}

// reword rewrites the violations a model most often commits; others keep
// jsonschema-go's wording.
func reword(msg string) string {
	p := patterns()
	if m := p.typ.FindStringSubmatch(msg); m != nil {
		if m[2] != "" {
			return fmt.Sprintf("want %s, got %s", m[2], m[1])
		}
		return fmt.Sprintf("want one of %s, got %s", m[3], m[1])
	}
	if m := p.enum.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("want one of %s, got %s", m[2], m[1])
	}
	if m := p.anyOf.FindStringSubmatch(msg); m != nil {
		// One line per alternative, each "validating <schema path>: <violation>".
		var alts []string
		for _, line := range strings.Split(m[1], "\n") {
			alts = append(alts, reword(p.prefix.ReplaceAllString(line, "")))
		}
		return "matches no alternative of anyOf: " + strings.Join(alts, " | ")
	}
	if m := p.bound.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("want %s %s, got %s", boundWords[m[1]], number(m[3]), number(m[2]))
	}
	return cleanText(msg)
}

// number shortens the numbers in jsonschema-go's messages: 300/1 and
// 127.000000 are 300 and 127.
func number(s string) string {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return s
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func quotedStrings(list string) []string {
	var out []string
	for _, q := range patterns().quoted.FindAllString(list, -1) {
		if s, err := strconv.Unquote(q); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// cleanText puts a multi-line message (anyOf lists each alternative's
// failure on its own line) on one line.
func cleanText(msg string) string {
	return strings.ReplaceAll(msg, "\n", " | ")
}
