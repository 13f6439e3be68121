package converse_test

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// initLine is a line of GODEBUG=inittrace=1: a package's init and what it
// allocated.
var initLine = regexp.MustCompile(`^init (\S+) @.* clock, (\d+) bytes, (\d+) allocs$`)

// TestPackagesStartCheaply checks that the library's packages do next to
// nothing when a program starts. Their regular expressions are compiled at
// first use (the credential redaction, the reading of validation errors). So a
// program or a CLI run that never needs them does not pay for them.
// GODEBUG=inittrace=1 reports each package's init; the allocations it reports
// do not depend on the machine. bedrocktest, a test double, is not held to it.
func TestPackagesStartCheaply(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	seen := 0
	for line := range strings.Lines(string(out)) {
		m := initLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil || !strings.HasPrefix(m[1], "github.com/tooluse/bedrock/") || strings.HasSuffix(m[1], "_test") || strings.HasSuffix(m[1], "/bedrocktest") {
			continue
		}
		seen++
		bytes, _ := strconv.Atoi(m[2])
		assert.LessOrEqual(t, bytes, 4096, "%s allocates %s bytes (%s allocations) when a program starts", m[1], m[2], m[3])
	}
	assert.GreaterOrEqual(t, seen, 4, "inittrace reported the inits of converse, tools and their internal packages:\n%s", out)
}
