package models

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Bedrock's structured output (outputConfig.textFormat) and strict tools
// (toolSpec "strict") take only closed object schemas: every object
// schema must say "additionalProperties": false. Anthropic answers one
// that leaves it out with "For 'object' type, 'additionalProperties' must
// be explicitly set to false". Anthropic's structured outputs guide says
// "additionalProperties (must be set to false for objects)". On Bedrock,
// BerriAI/litellm pull 25209 reports it for strict tools, and ax-llm/ax
// issue 458 and veryfront/veryfront-code issue 3918 for the output format.
// Anthropic answers one that sets it otherwise with "For 'object' type,
// 'additionalProperties: true' is not supported. Please set
// 'additionalProperties' to false" (BerriAI/litellm issue 35808).

// subschemaMaps and subschemaLists are the keywords whose values hold
// subschemas, by name or in a list.
var (
	subschemaMaps  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	subschemaLists = []string{"anyOf", "oneOf", "allOf", "prefixItems"}
	subschemaOnes  = []string{"items", "additionalItems", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems"}
)

// CloseObjects makes every object schema in schema, a decoded JSON
// Schema, closed: it sets "additionalProperties": false where the keyword
// is missing. An object schema that sets it to anything but false is an
// error naming where, since closing it would change what it accepts.
func CloseObjects(schema map[string]any) error {
	return walkObjects(schema, "", func(obj map[string]any, path string) error {
		ap, ok := obj["additionalProperties"]
		if !ok {
			obj["additionalProperties"] = false
			return nil
		}
		if ap != false {
			return fmt.Errorf("the object schema at %s sets additionalProperties, which must be false or left out", where(path))
		}
		return nil
	})
}

// OpenObject reports whether schema, a decoded JSON Schema, holds an
// object schema that does not set "additionalProperties": false, with the
// value the first one sets (nil when left out).
func OpenObject(schema map[string]any) (value any, open bool) {
	_ = walkObjects(schema, "", func(obj map[string]any, _ string) error {
		if ap, ok := obj["additionalProperties"]; !ok || ap != false {
			value, open = ap, true
			return errStop
		}
		return nil
	})
	return value, open
}

// errStop ends a walk early.
var errStop = errors.New("stop")

// where names a JSON pointer for an error: the root is "the root".
func where(path string) string {
	if path == "" {
		return "the root"
	}
	return path
}

// walkObjects calls fn on every object schema in s, parent before
// children, each with its JSON pointer. It stops at fn's first error. An
// object schema has type "object", a list of types holding it, or
// properties and no type.
func walkObjects(s any, path string, fn func(map[string]any, string) error) error {
	return walkSchemas(s, path, func(m map[string]any, path string) error {
		if isObjectSchema(m) {
			return fn(m, path)
		}
		return nil
	})
}

// walkSchemas calls fn on every schema in s, parent before children, each
// with its JSON pointer, stopping at fn's first error.
func walkSchemas(s any, path string, fn func(map[string]any, string) error) error {
	m, ok := s.(map[string]any)
	if !ok {
		return nil
	}
	if err := fn(m, path); err != nil {
		return err
	}
	for _, k := range subschemaMaps {
		sub, _ := m[k].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(sub)) {
			if err := walkSchemas(sub[name], path+"/"+escape(k)+"/"+escape(name), fn); err != nil {
				return err
			}
		}
	}
	for _, k := range subschemaLists {
		list, _ := m[k].([]any)
		for i, v := range list {
			if err := walkSchemas(v, path+"/"+k+"/"+strconv.Itoa(i), fn); err != nil {
				return err
			}
		}
	}
	for _, k := range subschemaOnes {
		switch v := m[k].(type) {
		case map[string]any:
			if err := walkSchemas(v, path+"/"+k, fn); err != nil {
				return err
			}
		case []any: // items as a list, in drafts before 2020-12
			for i, e := range v {
				if err := walkSchemas(e, path+"/"+k+"/"+strconv.Itoa(i), fn); err != nil {
					return err
				}
			}
		}
	}
	if ap, ok := m["additionalProperties"].(map[string]any); ok {
		return walkSchemas(ap, path+"/additionalProperties", fn)
	}
	return nil
}

// isObjectSchema reports whether m describes objects.
func isObjectSchema(m map[string]any) bool {
	switch t := m["type"].(type) {
	case string:
		return t == "object"
	case []any:
		for _, e := range t {
			if e == "object" {
				return true
			}
		}
		return false
	case nil:
		_, props := m["properties"]
		return props
	}
	return false
}

// escape escapes a JSON pointer token.
func escape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// Anthropic's structured outputs, which Bedrock's outputConfig.textFormat
// and strict tools are, take a subset of JSON Schema (its structured
// outputs guide, "JSON Schema limitations"). They take no numerical
// constraints (minimum, maximum, multipleOf, ...) and no string length
// constraints. They take no array constraints beyond a minItems of 0 or 1.
// A schema with one is answered with a 400 such as "For 'integer' type,
// property 'minimum' is not supported" (agentjido/req_llm issue 302).
// unsupportedKeywords are those keywords.
var unsupportedKeywords = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"minLength", "maxLength", "minItems", "maxItems", "uniqueItems", "minContains", "maxContains", "minProperties", "maxProperties"}

// unsupported returns the keywords of unsupportedKeywords that the schema m
// sets, as Anthropic's structured outputs count them (a minItems of 0 or 1
// is taken), in the order of that list.
func unsupported(m map[string]any) []string {
	var out []string
	for _, k := range unsupportedKeywords {
		v, ok := m[k]
		if !ok {
			continue
		}
		if k == "minItems" {
			if n, err := strconv.ParseFloat(fmt.Sprint(v), 64); err == nil && n <= 1 {
				continue
			}
		}
		out = append(out, k)
	}
	return out
}

// DropUnsupported removes from every schema in schema, a decoded JSON
// Schema, the keywords Anthropic's structured outputs do not take. It says
// them in its description instead, as Anthropic's SDKs do ("{minimum: 1,
// maximum: 10}"). So the model still reads them. The library validates
// with the whole schema, so it still holds the answer to them.
func DropUnsupported(schema map[string]any) {
	_ = walkSchemas(schema, "", func(m map[string]any, _ string) error {
		keys := unsupported(m)
		if len(keys) == 0 {
			return nil
		}
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s: %v", k, m[k])
			delete(m, k)
		}
		said := "{" + strings.Join(parts, ", ") + "}"
		if d, _ := m["description"].(string); d != "" {
			said = d + "\n\n" + said
		}
		m["description"] = said
		return nil
	})
}

// StrictSchema makes schema, a decoded JSON Schema, one that Bedrock's
// structured output (outputConfig.textFormat) and strict tools take. It
// closes its object schemas (CloseObjects, whose error it returns). It
// says the keywords they do not take in descriptions (DropUnsupported).
func StrictSchema(schema map[string]any) error {
	if err := CloseObjects(schema); err != nil {
		return err
	}
	DropUnsupported(schema)
	return nil
}

// UnsupportedKeyword returns the first keyword, in walk order, that a
// schema of schema sets and Anthropic's structured outputs do not take,
// with the type of that schema ("integer", or "" for none), for
// bedrocktest's answer.
func UnsupportedKeyword(schema map[string]any) (keyword, typ string, found bool) {
	_ = walkSchemas(schema, "", func(m map[string]any, _ string) error {
		if keys := unsupported(m); len(keys) > 0 {
			keyword, found = keys[0], true
			typ, _ = m["type"].(string)
			return errStop
		}
		return nil
	})
	return keyword, typ, found
}
