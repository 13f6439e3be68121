// Package inmemory reaches a bedrocktest Server without a socket, for
// the tests that run in a testing/synctest bubble.
package inmemory

import (
	"net/http"
	"net/http/httptest"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// transport hands each request to a Server's handler on the caller's
// goroutine: no socket, so that a testing/synctest bubble holds the whole
// exchange and runs in virtual time. A request whose context ended gets
// the context's error, as from net/http's transport.
type transport struct{ srv *bedrocktest.Server }

func (t transport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.srv.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

// Client is a real client of srv over an in-memory transport.
func Client(srv *bedrocktest.Server, optFns ...func(*bedrockruntime.Options)) *bedrockruntime.Client {
	cfg := srv.Config()
	cfg.HTTPClient = &http.Client{Transport: transport{srv}}
	return bedrockruntime.NewFromConfig(cfg, optFns...)
}
