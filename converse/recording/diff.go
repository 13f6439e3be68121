package recording

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// maxDiffLines bounds a diff, so that a request that has nothing to do with
// the recording still gives a readable error.
const maxDiffLines = 10

// requestDiff compares a recorded request (model ID and body) with a
// received one and describes the differences, one a line, at most
// maxDiffLines; none means they match. The results of the tools named in
// ignoreTools are left out (see ReplayOptions.IgnoreToolResults).
func requestDiff(wantModel string, want []byte, gotModel string, got []byte, ignoreTools map[string]bool) []string {
	var lines []string
	if wantModel != gotModel {
		lines = append(lines, fmt.Sprintf("modelId: want %q, got %q", wantModel, gotModel))
	}
	wantV, err := decodeJSON(want)
	if err != nil {
		return append(lines, "body: the recorded body is not JSON: "+err.Error())
	}
	gotV, err := decodeJSON(got)
	if err != nil {
		return append(lines, "body: the request body is not JSON: "+err.Error())
	}
	if len(ignoreTools) > 0 {
		dropToolResults(wantV, ignoreTools)
		dropToolResults(gotV, ignoreTools)
	}
	diffJSON("", wantV, gotV, &lines)
	if len(lines) > maxDiffLines {
		more := len(lines) - (maxDiffLines - 1)
		lines = append(lines[:maxDiffLines-1], fmt.Sprintf("… and %d more differences", more))
	}
	return lines
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // compare numbers by value, without float rounding
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("data after the JSON value")
	}
	return v, nil
}

// dropToolResults deletes, in a decoded Converse request body, the content
// of the toolResult blocks that answer a toolUse of one of the named tools
// made in an earlier assistant message.
func dropToolResults(body any, names map[string]bool) {
	root, _ := body.(map[string]any)
	msgs, _ := root["messages"].([]any)
	ignored := make(map[string]bool) // toolUseIds of the named tools
	for _, msg := range msgs {
		m, _ := msg.(map[string]any)
		role, _ := m["role"].(string)
		content, _ := m["content"].([]any)
		for _, block := range content {
			b, _ := block.(map[string]any)
			if use, ok := b["toolUse"].(map[string]any); ok && role == "assistant" {
				name, _ := use["name"].(string)
				id, _ := use["toolUseId"].(string)
				if names[name] {
					ignored[id] = true
				}
			}
			if res, ok := b["toolResult"].(map[string]any); ok {
				id, _ := res["toolUseId"].(string)
				if ignored[id] {
					delete(res, "content")
				}
			}
		}
	}
}

// diffJSON appends to out a line for each difference between two decoded
// JSON values (decoded with UseNumber), found by walking both at once.
func diffJSON(path string, want, got any, out *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			wv, inW := w[k]
			gv, inG := g[k]
			p := jsonPathKey(path, k)
			switch {
			case !inG:
				*out = append(*out, fmt.Sprintf("%s: want %s, got nothing", p, showJSON(wv)))
			case !inW:
				*out = append(*out, fmt.Sprintf("%s: want nothing, got %s", p, showJSON(gv)))
			default:
				diffJSON(p, wv, gv, out)
			}
		}
		return
	case []any:
		g, ok := got.([]any)
		if !ok {
			break
		}
		for i := range max(len(w), len(g)) {
			p := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case i >= len(g):
				*out = append(*out, fmt.Sprintf("%s: want %s, got nothing", p, showJSON(w[i])))
			case i >= len(w):
				*out = append(*out, fmt.Sprintf("%s: want nothing, got %s", p, showJSON(g[i])))
			default:
				diffJSON(p, w[i], g[i], out)
			}
		}
		return
	case json.Number:
		if g, ok := got.(json.Number); ok && sameNumber(w, g) {
			return
		}
	case string, bool, nil:
		if want == got {
			return
		}
	}
	if path == "" {
		path = "body"
	}
	*out = append(*out, fmt.Sprintf("%s: want %s, got %s", path, showJSON(want), showJSON(got)))
}

func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, err1 := a.Float64()
	y, err2 := b.Float64()
	return err1 == nil && err2 == nil && x == y
}

var jsonIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// jsonPathKey extends a path with an object key: a.b, or a["b c"] for a key
// that is not an identifier.
func jsonPathKey(path, key string) string {
	if !jsonIdent.MatchString(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// maxShownJSON bounds a value shown in a diff line.
const maxShownJSON = 60

func showJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	s := strings.TrimSuffix(buf.String(), "\n")
	if r := []rune(s); len(r) > maxShownJSON {
		s = string(r[:maxShownJSON-1]) + "…"
	}
	return s
}
