package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
)

// Blobs keeps the payloads too large to travel through Temporal inline (see
// ClaimCheck). Keys are the SHA-256 of the data, so Put is idempotent: an
// activity retried, or a workflow task replayed, puts the same key again.
// It must be shared by every worker and client of the workflows: a
// directory on a shared file system (DirBlobs), or an object store.
type Blobs interface {
	Put(ctx context.Context, key string, data []byte) error
	// Get returns the data put under key, or an error matching
	// os.ErrNotExist if there is none.
	Get(ctx context.Context, key string) ([]byte, error)
}

// DirBlobs is Blobs in a directory, one file per key.
type DirBlobs string

// Put writes data to the file named key, through a temporary file, so that
// a reader never sees it half written.
func (d DirBlobs) Put(_ context.Context, key string, data []byte) error {
	if !validKey(key) {
		return fmt.Errorf("temporal: blob key %q is not a SHA-256", key)
	}
	path := filepath.Join(string(d), key)
	if _, err := os.Stat(path); err == nil {
		return nil // content-addressed: already there
	}
	if err := os.MkdirAll(string(d), 0o700); err != nil {
		return fmt.Errorf("temporal: blobs: %w", err)
	}
	f, err := os.CreateTemp(string(d), key+".tmp-*")
	if err != nil {
		return fmt.Errorf("temporal: blobs: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("temporal: blobs: %w", err)
	}
	return nil
}

// Get reads the file named key.
func (d DirBlobs) Get(_ context.Context, key string) ([]byte, error) {
	if !validKey(key) {
		return nil, fmt.Errorf("temporal: blob key %q is not a SHA-256", key)
	}
	b, err := os.ReadFile(filepath.Join(string(d), key))
	if err != nil {
		return nil, fmt.Errorf("temporal: blobs: %w", err)
	}
	return b, nil
}

func validKey(key string) bool {
	b, err := hex.DecodeString(key)
	return err == nil && len(b) == sha256.Size
}

// DefaultClaimThreshold is the size above which ClaimCheck stores a
// payload in Blobs: a quarter of Temporal's default limit of 2 MB a
// payload, and below its 512 KB warning.
const DefaultClaimThreshold = 256 << 10

// claimEncoding marks a payload whose data is the key of a blob.
const claimEncoding = "converse/claim-check"

// ClaimCheck is a PayloadCodec that stores each payload larger than
// Threshold in Blobs and sends its key instead: the claim check pattern.
// Long histories, large tool results and media then never reach Temporal's
// payload limit (2 MB by default) or fill a workflow's event history (50
// MB), which holds only the keys. A blob's data is checked against its key
// when it is read, so a store that returns other bytes is an error, not
// another conversation.
type ClaimCheck struct {
	Blobs Blobs
	// Threshold is the size in bytes above which a payload is stored; 0
	// means DefaultClaimThreshold.
	Threshold int
}

// Encode replaces each payload above the threshold with its key.
func (c *ClaimCheck) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	limit := c.Threshold
	if limit <= 0 {
		limit = DefaultClaimThreshold
	}
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		out[i] = p
		size := 0
		for _, v := range p.GetMetadata() {
			size += len(v)
		}
		if size+len(p.GetData()) <= limit {
			continue
		}
		raw, err := p.Marshal()
		if err != nil {
			return nil, fmt.Errorf("temporal: claim check: %w", err)
		}
		sum := sha256.Sum256(raw)
		key := hex.EncodeToString(sum[:])
		if err := c.Blobs.Put(context.Background(), key, raw); err != nil {
			return nil, fmt.Errorf("temporal: claim check: %w", err)
		}
		out[i] = &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(claimEncoding)}, Data: []byte(key)}
	}
	return out, nil
}

// Decode replaces each key with the payload stored under it; other
// payloads are returned as they are.
func (c *ClaimCheck) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		out[i] = p
		if string(p.GetMetadata()[converter.MetadataEncoding]) != claimEncoding {
			continue
		}
		key := string(p.GetData())
		raw, err := c.Blobs.Get(context.Background(), key)
		if err != nil {
			return nil, fmt.Errorf("temporal: claim check %s: %w", key, err)
		}
		if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != key {
			return nil, fmt.Errorf("temporal: claim check %s: %w", key, errBlobMismatch)
		}
		stored := &commonpb.Payload{}
		if err := stored.Unmarshal(raw); err != nil {
			return nil, fmt.Errorf("temporal: claim check %s: %w", key, err)
		}
		out[i] = stored
	}
	return out, nil
}

var errBlobMismatch = errors.New("the stored data does not match its key")

// DataConverter is Temporal's default data converter with a ClaimCheck in
// blobs: give it to the client (client.Options.DataConverter) of every
// worker and starter of the workflows. Reading a blob may take longer than
// Temporal's deadlock detection allows a workflow's code between yields, so
// the converter is exempt from it (workflow.DataConverterWithoutDeadlockDetection).
// The workers' Options.PayloadLimit should then be NoPayloadLimit.
func DataConverter(blobs Blobs) converter.DataConverter {
	return workflow.DataConverterWithoutDeadlockDetection(
		converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), &ClaimCheck{Blobs: blobs}))
}
