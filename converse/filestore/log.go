package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/tooluse/bedrock/converse"
)

// encodeLine returns the log line of st, from its JSON form: whole, or
// else a step record of its messages from the one at keep; then revision
// rev. It also returns the bytes of the line but its messages.
func encodeLine(st *converse.State, keep int, whole bool, rev int64) (line []byte, rest int64, err error) {
	part := *st // its JSON form from keep on: the open turn's results are not st's to read
	part.Messages, part.Turns = st.Messages[keep:], nil
	for i, rec := range st.Turns {
		if i >= keep-1 { // the message before the new ones may be the one whose calls were answered
			if part.Turns == nil {
				part.Turns = map[int]converse.TurnRecord{}
			}
			part.Turns[i] = rec
		}
	}
	form, err := part.MarshalJSON()
	if err != nil {
		return nil, 0, err
	}
	buf := bytes.NewBufferString("{")
	if !whole {
		fmt.Fprintf(buf, `"keep":%d,`, keep)
	}
	dec := json.NewDecoder(bytes.NewReader(form))
	if _, err := dec.Token(); err != nil {
		return nil, 0, fmt.Errorf("filestore: save session: %w", err)
	}
	messages := 0
	for dec.More() {
		key, err := dec.Token()
		var value json.RawMessage
		if err == nil {
			err = dec.Decode(&value)
		}
		if err != nil {
			return nil, 0, fmt.Errorf("filestore: save session: %w", err)
		}
		if !whole && (key == "version" || key == "modelId") {
			continue
		}
		if key == "messages" {
			messages = len(value)
		}
		fmt.Fprintf(buf, "%q:%s,", key, value)
	}
	fmt.Fprintf(buf, `"revision":%d}`+"\n", rev)
	return buf.Bytes(), int64(buf.Len() - messages), nil
}

// record is what reading a log needs of a line; its other fields are
// copied as they are.
type record struct {
	Keep     int               `json:"keep"`
	Messages json.RawMessage   `json:"messages"`
	Turns    []json.RawMessage `json:"turns"`
	Revision int64             `json:"revision"`
}

// readLog reads a session log: a state, then step records, one a line. The
// fileLog it returns lacks the file's path and info.
func readLog(b []byte) (*converse.State, *fileLog, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrNotSessionFile, err)
	}
	if fields["version"] == nil {
		return nil, nil, fmt.Errorf("%w: a JSON object without a state's version", ErrNotSessionFile)
	}
	// The version first: a state of another version is said to be one.
	var version int
	if err := unmarshalIfAny(fields["version"], &version); err != nil || version != converse.StateVersion {
		return nil, nil, fmt.Errorf("state version %d, this package reads version %d", version, converse.StateVersion)
	}
	base := record{Messages: fields["messages"]}
	msgs, err := readMessages(base.Messages)
	if err != nil {
		return nil, nil, fmt.Errorf("state: %w", err)
	}
	if err := unmarshalIfAny(fields["turns"], &base.Turns); err != nil {
		return nil, nil, fmt.Errorf("state: turns: %w", err)
	}
	if err := unmarshalIfAny(fields["revision"], &base.Revision); err != nil {
		return nil, nil, fmt.Errorf("state: revision: %w", err)
	}
	turns, err := keepTurns(map[int]json.RawMessage{}, base.Turns, 0, len(msgs))
	if err != nil {
		return nil, nil, fmt.Errorf("state: %w", err)
	}
	end := dec.InputOffset()
	log := &fileLog{last: end - int64(len(base.Messages)), revision: max(base.Revision, 1)}
	for rest := b[end:]; len(bytes.TrimSpace(rest)) > 0; {
		n := bytes.IndexByte(rest, '\n')
		if n < 0 {
			break // torn by a crash
		}
		line := rest[:n]
		if len(bytes.TrimSpace(line)) == 0 { // the end of the state's line
			end += int64(n + 1)
			rest = rest[n+1:]
			continue
		}
		var rec record
		var recFields map[string]json.RawMessage
		err := json.Unmarshal(line, &rec)
		if err == nil {
			err = json.Unmarshal(line, &recFields)
		}
		if err != nil {
			if len(bytes.TrimSpace(rest[n+1:])) == 0 {
				break // torn by a crash
			}
			return nil, nil, fmt.Errorf("state: the record at byte %d: %w", end, err)
		}
		if rec.Keep < 0 || rec.Keep > len(msgs) {
			return nil, nil, fmt.Errorf("state: the record at byte %d keeps %d of %d messages", end, rec.Keep, len(msgs))
		}
		more, err := readMessages(rec.Messages)
		if err == nil {
			msgs = append(msgs[:rec.Keep:rec.Keep], more...)
			turns, err = keepTurns(turns, rec.Turns, rec.Keep-1, len(msgs))
		}
		if err != nil {
			return nil, nil, fmt.Errorf("state: the record at byte %d: %w", end, err)
		}
		maps.DeleteFunc(fields, func(k string, _ json.RawMessage) bool { return k != "version" && k != "modelId" })
		for k, v := range recFields {
			if k != "keep" && k != "revision" {
				fields[k] = v
			}
		}
		log.revision++
		if rec.Revision > 0 {
			log.revision = rec.Revision
		}
		log.waste += log.last
		log.last = int64(len(line) + 1 - len(rec.Messages))
		end += int64(n + 1)
		rest = rest[n+1:]
	}
	st, err := merged(fields, msgs, turns)
	if err != nil {
		return nil, nil, err
	}
	log.end, log.messages = end, st.Messages
	st.Revision = log.revision
	return st, log, nil
}

// readMessages splits a "messages" array into its messages.
func readMessages(raw json.RawMessage) ([]json.RawMessage, error) {
	if raw = bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '[' {
		return nil, errors.New("messages: not a JSON array")
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	return msgs, nil
}

// keepTurns returns turns, by message, with the records of the messages
// from the one at from replaced by those of more, of messages below n.
func keepTurns(turns map[int]json.RawMessage, more []json.RawMessage, from, n int) (map[int]json.RawMessage, error) {
	maps.DeleteFunc(turns, func(i int, _ json.RawMessage) bool { return i >= from })
	for _, raw := range more {
		var t struct {
			Message int `json:"message"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("turns: %w", err)
		}
		if t.Message >= max(from, 0) && t.Message < n {
			turns[t.Message] = raw
		}
	}
	return turns, nil
}

// merged is the State of the JSON form of fields, with msgs and turns. Its
// values are copied as they are, so that a call's input is what was saved.
func merged(fields map[string]json.RawMessage, msgs []json.RawMessage, turns map[int]json.RawMessage) (*converse.State, error) {
	form := maps.Clone(fields)
	delete(form, "revision")
	delete(form, "turns")
	form["messages"] = array(msgs)
	if len(turns) > 0 {
		sorted := make([]json.RawMessage, 0, len(turns))
		for _, i := range slices.Sorted(maps.Keys(turns)) {
			sorted = append(sorted, turns[i])
		}
		form["turns"] = array(sorted)
	}
	b := []byte("{")
	for i, k := range slices.Sorted(maps.Keys(form)) {
		key, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, key...), ':'), form[k]...)
	}
	st := &converse.State{}
	if err := st.UnmarshalJSON(append(b, '}')); err != nil {
		return nil, err
	}
	return st, nil
}

// array is the JSON array of values.
func array(values []json.RawMessage) json.RawMessage {
	b := []byte("[")
	for i, v := range values {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, v...)
	}
	return append(b, ']')
}

// unmarshalIfAny unmarshals raw into v, unless raw is absent.
func unmarshalIfAny(raw json.RawMessage, v any) error {
	if raw == nil {
		return nil
	}
	return json.Unmarshal(raw, v)
}
