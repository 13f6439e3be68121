package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// ErrBadAnswer is wrapped by the error of [Question.Check] when an answer
// does not fit the question's schema.
var ErrBadAnswer = errors.New("tools: the answer does not fit the question")

// Question is what a tool asks the user in the middle of a call: a
// confirmation, a missing field, a choice. Message and Schema come from
// the tool (an MCP server, say) and are untrusted text.
type Question struct {
	// Message is the question, for the user.
	Message string `json:"message"`
	// Schema is the JSON schema of an accepted answer, an object; empty
	// means any object.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Retry is what the tool needs to go on with the call once answered,
	// opaque to everyone else: it is stored with the paused call.
	Retry json.RawMessage `json:"retry,omitempty"`
}

// InputRequiredError is returned by a tool that needs the user's answer to
// Question before it can finish the call. The executor then leaves the
// call pending, and calls the tool again with the answer (see
// [WithAnswer]).
type InputRequiredError struct {
	Question Question
}

// Error returns "tools: the call needs the user's input: " and the message.
func (e *InputRequiredError) Error() string {
	return fmt.Sprintf("tools: the call needs the user's input: %q", e.Question.Message)
}

// Action is how the user answered a Question.
type Action string

// The actions, as MCP names them.
const (
	// Accept answers with content that fits the question's schema.
	Accept Action = "accept"
	// Decline refuses, explicitly.
	Decline Action = "decline"
	// Cancel dismisses the question without a choice.
	Cancel Action = "cancel"
)

// Answer is the user's answer to a Question, handed to the tool that asked
// when the call runs again.
type Answer struct {
	// Question is the question answered, Retry included.
	Question Question
	// Action says whether the user accepted, declined or cancelled.
	Action Action
	// Content is the accepted answer, a JSON object; nil otherwise, and
	// then left out of the JSON form, so that it decodes as nil.
	Content json.RawMessage `json:",omitempty"`
}

// answerKey is the context key of a call's answer.
type answerKey struct{}

// WithAnswer returns a copy of ctx that hands a tool the answer to the
// question it asked in an earlier run of the same call.
func WithAnswer(ctx context.Context, a Answer) context.Context {
	return context.WithValue(ctx, answerKey{}, a)
}

// AnswerOf returns the answer that ctx carries for the call (see
// [WithAnswer]), and whether it carries one.
func AnswerOf(ctx context.Context) (Answer, bool) {
	a, ok := ctx.Value(answerKey{}).(Answer)
	return a, ok
}

// Check reports whether content, an accepted answer, is a JSON object that
// fits the question's schema. An error wraps [ErrBadAnswer] and says what
// is wrong; a schema that cannot be read is an error too, as no answer can
// be checked against it.
func (q Question) Check(content json.RawMessage) error {
	var v map[string]any
	if err := json.Unmarshal(content, &v); err != nil || v == nil {
		return fmt.Errorf("%w: not a JSON object", ErrBadAnswer)
	}
	if len(q.Schema) == 0 {
		return nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(q.Schema, &s); err != nil {
		return fmt.Errorf("%w: the question's schema: %w", ErrBadAnswer, err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return fmt.Errorf("%w: the question's schema: %w", ErrBadAnswer, err)
	}
	if err := resolved.Validate(v); err != nil {
		return fmt.Errorf("%w: %w", ErrBadAnswer, err)
	}
	return nil
}
