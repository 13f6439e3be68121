package agentcore_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/agentcore"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
)

// failingStore is a filestore.Store whose saves fail with err, if set.
type failingStore struct {
	filestore.Store
	err error
}

func (s failingStore) Save(ctx context.Context, id string, st *converse.State) error {
	if s.err != nil {
		return s.err
	}
	return s.Store.Save(ctx, id, st)
}

// TestStoreFailureIsNotBedrocks: an AWS API error of the Store (DynamoDB's,
// as a dynamostore.Store returns it, or a bare one) is a 500 without an
// errorType, not a Bedrock failure; a Bedrock failure with such a Store is
// still a 502.
func TestStoreFailureIsNotBedrocks(t *testing.T) {
	throttled := &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException", Message: "The level of configured provisioned throughput for the table was exceeded."}
	for _, tc := range []struct {
		name      string
		storeErr  error
		bedrock   func() bedrocktest.Handler // one for each run
		status    int
		errorType string
	}{
		{
			name:     "DynamoDB error",
			storeErr: &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "PutItem", Err: throttled},
			bedrock:  func() bedrocktest.Handler { return bedrocktest.Script(bedrocktest.Text("Hi.")) },
			status:   http.StatusInternalServerError,
		},
		{
			name:     "bare API error",
			storeErr: throttled,
			bedrock:  func() bedrocktest.Handler { return bedrocktest.Script(bedrocktest.Text("Hi.")) },
			status:   http.StatusInternalServerError,
		},
		{
			name: "Bedrock error",
			bedrock: func() bedrocktest.Handler {
				return bedrocktest.Fail(1, bedrocktest.AccessDenied("You don't have access to the model."), bedrocktest.Script())
			},
			status:    http.StatusBadGateway,
			errorType: "AccessDeniedException",
		},
	} {
		for _, stream := range []bool{false, true} {
			name := tc.name
			if stream {
				name += " in a stream"
			}
			t.Run(name, func(t *testing.T) {
				bed := bedrocktest.NewServer(tc.bedrock())
				defer bed.Close()
				f := serve(t, bed, registry(t), t.TempDir(), func(o *agentcore.Options) {
					o.Store = failingStore{filestore.Store{Dir: t.TempDir()}, tc.storeErr}
				})
				body := `{"prompt": "hi"}`
				if stream {
					body = `{"prompt": "hi", "stream": true}`
				}
				a := f.call(session, body, tc.status)
				assert.Equal(t, "error", a.Status)
				assert.Equal(t, tc.errorType, a.ErrorType)
				if tc.storeErr != nil {
					assert.Contains(t, a.Error, "the session store failed; the server's log says why")
				}
			})
		}
	}
}
