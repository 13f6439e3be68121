package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
)

func TestQuestionCheck(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)
	tests := []struct {
		name    string
		schema  json.RawMessage
		content string
		bad     bool
	}{
		{"fits", schema, `{"ok":true}`, false},
		{"breaks the schema", schema, `{"ok":"yes"}`, true},
		{"a field missing", schema, `{}`, true},
		{"not an object", schema, `[true]`, true},
		{"null", nil, `null`, true},
		{"any object without a schema", nil, `{"x":1}`, false},
		{"a schema that is not one", json.RawMessage(`{"type":7}`), `{}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tools.Question{Message: "?", Schema: tt.schema}.Check(json.RawMessage(tt.content))
			if !tt.bad {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tools.ErrBadAnswer)
		})
	}
}

func TestAnswerTravelsInTheContext(t *testing.T) {
	_, ok := tools.AnswerOf(context.Background())
	assert.False(t, ok)
	a := tools.Answer{Question: tools.Question{Message: "?", Retry: json.RawMessage(`{"k":1}`)}, Action: tools.Decline}
	got, ok := tools.AnswerOf(tools.WithAnswer(context.Background(), a))
	require.True(t, ok)
	assert.Equal(t, a, got)
	assert.Equal(t, `tools: the call needs the user's input: "Deploy\x1b[2J?"`, (&tools.InputRequiredError{Question: tools.Question{Message: "Deploy\x1b[2J?"}}).Error())
}
