package temporal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	ctemporal "github.com/tooluse/bedrock/converse/temporal"
)

func TestClaimCheck(t *testing.T) {
	dir := t.TempDir()
	cc := &ctemporal.ClaimCheck{Blobs: ctemporal.DirBlobs(dir), Threshold: 1024}
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), cc)
	small, large := "hello", strings.Repeat("x", 4096)

	payloads, err := dc.ToPayloads(small, large)
	require.NoError(t, err)
	p := payloads.GetPayloads()
	assert.Contains(t, string(p[0].GetData()), small, "a small payload stays inline")
	assert.Len(t, p[1].GetData(), 64, "a large one is its SHA-256")
	var gotSmall, gotLarge string
	require.NoError(t, dc.FromPayloads(payloads, &gotSmall, &gotLarge))
	assert.Equal(t, small, gotSmall)
	assert.Equal(t, large, gotLarge)

	again, err := dc.ToPayloads(small, large)
	require.NoError(t, err)
	assert.Equal(t, p[1].GetData(), again.GetPayloads()[1].GetData(), "content-addressed: the same key")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1)

	// A store that returns other bytes is an error, not another payload.
	require.NoError(t, os.WriteFile(filepath.Join(dir, string(p[1].GetData())), []byte("tampered"), 0o600))
	_, err = cc.Decode([]*commonpb.Payload{p[1]})
	assert.ErrorContains(t, err, "the stored data does not match its key")

	_, err = ctemporal.DirBlobs(dir).Get(context.Background(), "../etc/passwd")
	assert.ErrorContains(t, err, "is not a SHA-256")
	_, err = ctemporal.DirBlobs(dir).Get(context.Background(), strings.Repeat("0", 64))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
