package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryLinksNoTestHelpers checks that the command's -record and
// -replay come from the recording package: the binary must not link
// bedrocktest, the loopback Bedrock for tests.
func TestBinaryLinksNoTestHelpers(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	require.NoError(t, err)
	for _, pkg := range strings.Fields(string(out)) {
		assert.NotContains(t, pkg, "bedrocktest", "cmd/converse imports %s", pkg)
	}
}
