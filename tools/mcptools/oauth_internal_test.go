package mcptools

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRedactBearer(t *testing.T) {
	for _, tc := range []struct{ text, authorization, want string }{
		{"token tok-1 was refused", "Bearer tok-1", "token [redacted] was refused"},
		{"token tok-1 was refused", "bearer  tok-1 ", "token [redacted] was refused"},
		{"no token", "", "no token"},
		{"basic dXNlcg==", "Basic dXNlcg==", "basic dXNlcg=="},
	} {
		assert.Equal(t, tc.want, redactBearer(tc.text, tc.authorization), tc.authorization)
	}
}
