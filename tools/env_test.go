package tools_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tooluse/bedrock/tools"
)

func TestMinimalEnv(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("MINIMAL_ENV_PASSED", "yes")
	t.Setenv("PATH", "/bin")
	env := tools.MinimalEnv(map[string]string{"PATH": "/usr/bin", "SET": "1"}, []string{"MINIMAL_ENV_PASSED"})
	assert.Contains(t, env, "PATH=/usr/bin", "a set variable wins")
	assert.Contains(t, env, "SET=1")
	assert.Contains(t, env, "MINIMAL_ENV_PASSED=yes")
	assert.NotContains(t, env, "AWS_SECRET_ACCESS_KEY=secret")
	assert.NotNil(t, tools.MinimalEnv(nil, nil))
}
