package evaltest_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/evaltest"
)

// TestRecorded: the judge's calls are recorded the first time, replayed
// after without the live model, and recorded anew with update.
func TestRecorded(t *testing.T) {
	t.Parallel()
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.Text(`{"verdict":"fail","score":0.2,"reason":"No calculator."}`),
		bedrocktest.Text(`{"verdict":"pass","score":1,"reason":"Fine."}`),
	))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "judge.json")
	calls := 0
	live := func() (*bedrockruntime.Client, error) { calls++; return srv.Client(), nil }
	grade := func(update bool) evaltest.Grade {
		client, finish, err := evaltest.Recorded(path, update, live)
		require.NoError(t, err)
		g, err := (&evaltest.Judge{Client: client, Model: judgeModel}).Grade(t.Context(), "Uses the calculator.", trajectory())
		require.NoError(t, err)
		require.NoError(t, finish())
		return g
	}
	assert.Equal(t, "fail", grade(false).Verdict) // recorded
	assert.Equal(t, "fail", grade(false).Verdict) // replayed
	assert.Equal(t, 1, calls)
	assert.Equal(t, "pass", grade(true).Verdict) // recorded anew
	assert.Equal(t, "pass", grade(false).Verdict)
	assert.Equal(t, 2, calls)
	assert.Len(t, srv.Requests(), 2)

	// A replay that is not used up says so.
	_, finish, err := evaltest.Recorded(path, false, live)
	require.NoError(t, err)
	assert.ErrorContains(t, finish(), "recording")

	none := filepath.Join(t.TempDir(), "none.json")
	_, _, err = evaltest.Recorded(none, false, func() (*bedrockruntime.Client, error) {
		return nil, errors.New("no credentials")
	})
	assert.EqualError(t, err, "evaltest: recording "+none+": no credentials")
}
