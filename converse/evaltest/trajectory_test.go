package evaltest_test

import (
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/evaltest"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/tools"
)

// TestLoad: the trajectory of a recording and of a session file is that of
// the conversation that made them, streamed or not.
func TestLoad(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "converse", true: "stream"}[stream], func(t *testing.T) {
			t.Parallel()
			srv := bedrocktest.NewServer(calculatorModel)
			defer srv.Close()
			rec := recording.NewRecorder(srv.HTTPClient())
			client := bedrockruntime.NewFromConfig(srv.Config(), func(o *bedrockruntime.Options) { o.HTTPClient = rec })
			dir := t.TempDir()
			reg, err := tools.NewRegistry(tools.Builtins()...)
			require.NoError(t, err)
			conv := converse.New(client, model, reg, func(o *converse.Options) {
				o.Session = &converse.Session{Store: filestore.Store{Dir: dir}, ID: "s1"}
				if stream {
					o.Stream = &converse.StreamPolicy{}
				}
			})
			res, err := conv.Send(t.Context(), "What is 6 times 7?")
			require.NoError(t, err)
			recFile := filepath.Join(dir, "rec.json")
			require.NoError(t, rec.Save(recFile))

			want := evaltest.FromResult(res)
			assert.Equal(t, []string{"calculator"}, want.Tools())
			assert.Equal(t, "success", want.Calls[0].Status)
			assert.Equal(t, "42", want.Calls[0].Output)
			for _, path := range []string{recFile, filepath.Join(dir, "s1")} {
				got, err := evaltest.Load(t.Context(), path)
				require.NoError(t, err, path)
				assert.Equal(t, want.Calls, got.Calls, path)
				assert.Equal(t, want.Answer, got.Answer, path)
				assert.Equal(t, want.Turns, got.Turns, path)
				assert.Equal(t, want.Usage.TotalTokens, got.Usage.TotalTokens, path)
				assert.InDelta(t, want.CostUSD, got.CostUSD, 1e-12, path)
			}
		})
	}
	_, err := evaltest.Load(t.Context(), "../../testdata/eval/arithmetic.yaml")
	assert.ErrorContains(t, err, "neither a recording nor a session file")
}
