package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// mediaKey marks a command's media envelope: a JSON object whose only keys
// are "$media" and, optionally, "output". Ordinary JSON output has no key
// starting with "$" of that name, so it is never taken for one.
const mediaKey = "$media"

// mediaItem is one medium of an envelope; Data is base64 in the JSON.
type mediaItem struct {
	Type string `json:"type"`
	Name string `json:"name"`
	Data []byte `json:"data"`
}

// mediaEnvelope reads a [Result] from a command's trimmed standard output
// when it is a media envelope. ok is false for any other output; err is set
// for an envelope that cannot be read, worded for the model.
func mediaEnvelope(out []byte) (res Result, ok bool, err error) {
	if len(out) == 0 || out[0] != '{' || !bytes.Contains(out, []byte(`"`+mediaKey+`"`)) {
		return Result{}, false, nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(out, &fields) != nil {
		return Result{}, false, nil
	}
	raw, ok := fields[mediaKey]
	if !ok || len(fields) > 2 || len(fields) == 2 && fields["output"] == nil {
		return Result{}, false, nil
	}
	if output, ok := fields["output"]; ok && !bytes.Equal(output, []byte("null")) {
		res.Output = output
	}
	var items []mediaItem
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&items); err != nil {
		return Result{}, true, errors.New("the program's " + mediaKey + " is not a list of {\"type\", \"name\", \"data\"} objects with base64 data: " + envelopeProblem(err))
	}
	for i, it := range items {
		if it.Type == "" || len(it.Data) == 0 {
			return Result{}, true, fmt.Errorf("the program's %s[%d] needs a type and data", mediaKey, i)
		}
		res.Media = append(res.Media, Media(it))
	}
	return res, true, nil
}

// envelopeProblem says what encoding/json found wrong, without Go type
// names.
func envelopeProblem(err error) string {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		where := typ.Field
		if where == "" {
			where = "its top"
		}
		return "a JSON " + typ.Value + " at " + where
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
