package agentcore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/tooluse/bedrock/converse"
)

// invocation is the body of POST /invocations.
type invocation struct {
	Prompt    string     `json:"prompt"`
	Decisions []decision `json:"decisions"`
	Stream    bool       `json:"stream"`
}

// decision is a converse.Decision in the body; By defaults to "the
// caller".
type decision struct {
	ID      string           `json:"toolUseId"`
	Verdict converse.Verdict `json:"verdict"`
	By      string           `json:"by"`
	Reason  string           `json:"reason"`
}

func (inv *invocation) decisions() []converse.Decision {
	ds := make([]converse.Decision, len(inv.Decisions))
	for i, d := range inv.Decisions {
		if d.By == "" && d.Verdict == converse.Denied {
			d.By = "the caller"
		}
		ds[i] = converse.Decision{ID: d.ID, Verdict: d.Verdict, By: d.By, Reason: d.Reason}
	}
	return ds
}

// bodyTypes are the Content-Types of a body read as JSON: JSON's own, and
// those that callers send JSON as without saying so. The AWS SDK for Go's
// InvokeAgentRuntime sends application/octet-stream when its input has no
// ContentType, and the runtime passes the header on; the runtime's Python
// SDK (BedrockAgentCoreApp) reads every body as JSON whatever its type.
var bodyTypes = map[string]bool{
	"application/json":         true,
	"application/octet-stream": true,
	"text/plain":               true,
}

// readInvocation reads and checks the body. Its errors say what is wrong
// with it, with the status to answer: 415 for a Content-Type other than
// those of bodyTypes (or none), 413 for a body over maxBody bytes, 400 for
// the rest.
func readInvocation(w http.ResponseWriter, r *http.Request) (*invocation, int, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || !bodyTypes[mt] {
			return nil, http.StatusUnsupportedMediaType, fmt.Errorf("agentcore: the body is %q: want application/json (or application/octet-stream or text/plain holding JSON)", ct)
		}
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("agentcore: the body is larger than %d bytes (InvokeAgentRuntime takes up to 100 MB)", maxBody)
	}
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("agentcore: reading the body: %w", err)
	}
	inv, err := decodeInvocation(data)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	return inv, http.StatusOK, nil
}

// decodeInvocation decodes and checks the body; its errors say what is
// wrong with it.
func decodeInvocation(data []byte) (*invocation, error) {
	var inv invocation
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&inv); err != nil {
		return nil, fmt.Errorf(`agentcore: the body is not {"prompt": "..."} or {"decisions": [...]}: %w`, err)
	}
	if dec.More() {
		return nil, errors.New("agentcore: the body has data after its JSON object")
	}
	switch {
	case strings.TrimSpace(inv.Prompt) == "" && len(inv.Decisions) == 0:
		return nil, errors.New(`agentcore: the body has no "prompt" and no "decisions"`)
	case inv.Prompt != "" && len(inv.Decisions) > 0:
		return nil, errors.New(`agentcore: the body has both a "prompt" and "decisions": send the decisions first, then the prompt`)
	}
	return &inv, nil
}

// acceptsStream reports whether the caller asked for server-sent events in
// its Accept header.
func acceptsStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/event-stream" {
				return true
			}
		}
	}
	return false
}
