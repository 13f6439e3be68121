package wire

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestErrorMessage(t *testing.T) {
	for body, want := range map[string]string{
		`{"message":"a"}`:            "a",
		`{"Message":"b"}`:            "b",
		`"<html>Bad Gateway</html>"`: "<html>Bad Gateway</html>",
		`{"other":1}`:                `{"other":1}`,
		``:                           ``,
	} {
		assert.Equal(t, want, ErrorMessage([]byte(body)), "ErrorMessage(%s)", body)
	}
}
