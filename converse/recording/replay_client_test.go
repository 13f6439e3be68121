package recording_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
)

// headerCheck fails the test for a request that carries a credential.
type headerCheck struct {
	t    *testing.T
	next aws.HTTPClient
}

func (h headerCheck) Do(req *http.Request) (*http.Response, error) {
	for _, name := range []string{"Authorization", "X-Amz-Security-Token", "X-Amz-Date"} {
		assert.Empty(h.t, req.Header.Get(name), name)
	}
	return h.next.Do(req)
}

// TestReplayerClientNeedsNoCredentials: Replayer.Client replays a
// Converse and a ConverseStream call on a machine with no AWS configuration
// at all, as in CI. It asks no EC2 metadata service and does not panic. It
// sends no credential, not even the Bedrock API key of the environment.
func TestReplayerClientNeedsNoCredentials(t *testing.T) {
	ctx := context.Background()
	live := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("Hello!"), bedrocktest.Text("Hello again!")))
	defer live.Close()
	recorder := recording.NewRecorder(live.HTTPClient())
	client := live.Client(func(o *bedrockruntime.Options) { o.HTTPClient = recorder })
	input := &bedrockruntime.ConverseInput{ModelId: aws.String(e2eModel), Messages: []types.Message{userMessage("Say hello.")}}
	_, err := client.Converse(ctx, input)
	require.NoError(t, err)
	stream := &bedrockruntime.ConverseStreamInput{ModelId: input.ModelId, Messages: input.Messages}
	out, err := client.ConverseStream(ctx, stream)
	require.NoError(t, err)
	for range out.GetStream().Events() {
	}
	require.NoError(t, out.GetStream().Close())

	var imds atomic.Int32
	metadata := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		imds.Add(1)
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer metadata.Close()
	missing := filepath.Join(t.TempDir(), "none")
	for _, name := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"} {
		t.Setenv(name, "")
	}
	t.Setenv("AWS_CONFIG_FILE", missing)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", missing)
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", metadata.URL)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "")
	require.NoError(t, os.Unsetenv("AWS_EC2_METADATA_DISABLED"))
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "a-bedrock-api-key")

	replayer := recording.NewReplayer(recorder.Recording())
	replay := replayer.Client(func(o *bedrockruntime.Options) { o.HTTPClient = headerCheck{t, o.HTTPClient} })
	got, err := replay.Converse(ctx, input)
	require.NoError(t, err)
	assert.Equal(t, "Hello!", got.Output.(*types.ConverseOutputMemberMessage).Value.Content[0].(*types.ContentBlockMemberText).Value)
	streamed, err := replay.ConverseStream(ctx, stream)
	require.NoError(t, err)
	var text string
	for ev := range streamed.GetStream().Events() {
		if d, ok := ev.(*types.ConverseStreamOutputMemberContentBlockDelta); ok {
			text += d.Value.Delta.(*types.ContentBlockDeltaMemberText).Value
		}
	}
	require.NoError(t, streamed.GetStream().Err())
	assert.Equal(t, "Hello again!", text)
	require.NoError(t, replayer.Unused())
	assert.Zero(t, imds.Load(), "requests to the EC2 metadata service")
}
