package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/smithy-go/logging"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// credentialsTimeout bounds the search for credentials, so that a machine
// without any fails fast instead of waiting on the EC2 metadata service.
const credentialsTimeout = 10 * time.Second

// backend is where the model calls go: Bedrock, a custom endpoint, or a
// replay of a recording served in-process.
type backend struct {
	client   *bedrockruntime.Client
	region   string
	recorder *bedrocktest.Recorder // nil without -record
	close    func()
}

// newBackend builds the Bedrock Runtime client the flags ask for. rec is the
// -replay recording, or nil.
func newBackend(ctx context.Context, s *settings, rec *bedrocktest.Recording) (*backend, error) {
	if rec != nil {
		return replayBackend(s, rec), nil
	}
	var opts []func(*config.LoadOptions) error
	if !s.verbose {
		// The SDK's own warnings (such as an IMDS fallback) are noise
		// unless asked for; failures are reported anyway.
		opts = append(opts, config.WithLogger(logging.Nop{}))
	}
	if s.region != "" {
		opts = append(opts, config.WithRegion(s.region))
	}
	if s.profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(s.profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		var missing config.SharedConfigProfileNotExistError
		if errors.As(err, &missing) {
			return nil, usagef("profile %q is in neither ~/.aws/config nor ~/.aws/credentials: %w", missing.Profile, err)
		}
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = defaultRegion
	}
	if err := checkCredentials(ctx, cfg); err != nil {
		if !isLoopback(s.endpoint) || ctx.Err() != nil {
			return nil, err
		}
		// A local server, such as bedrocktest, needs no account: the
		// requests go unsigned. Without the preference for noAuth, the
		// client picks bearer auth with no token provider, and panics.
		cfg.Credentials = aws.AnonymousCredentials{}
		cfg.AuthSchemePreference = []string{"noAuth"}
	}
	return newClient(cfg, s), nil
}

// isLoopback reports whether endpoint, an -endpoint URL, is on this
// machine: localhost, 127.0.0.0/8 or ::1.
func isLoopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkCredentials finds the credentials before the first model call, so
// that a missing configuration is reported as such, and quickly.
func checkCredentials(ctx context.Context, cfg aws.Config) error {
	if cfg.Credentials == nil {
		return noCredentials(errors.New("no credential provider"))
	}
	lookup, cancel := context.WithTimeout(ctx, credentialsTimeout)
	defer cancel()
	if _, err := cfg.Credentials.Retrieve(lookup); err != nil {
		if ctx.Err() != nil {
			return failf(ctx.Err(), "interrupted") // while looking: not a missing configuration
		}
		return noCredentials(err)
	}
	return nil
}

// replayBackend serves rec from a bedrocktest server on loopback, with
// dummy credentials. Unless -replay-lenient, each request must match the
// recorded one, but for the results of get_current_datetime, which change
// from run to run.
func replayBackend(s *settings, rec *bedrocktest.Recording) *backend {
	opts := []bedrocktest.ReplayOption{bedrocktest.IgnoreToolResults("get_current_datetime")}
	if s.replayLenient {
		opts = append(opts, bedrocktest.Lenient())
	}
	srv := bedrocktest.NewServer(bedrocktest.Replay(rec, opts...))
	cfg := srv.Config()
	if s.region != "" {
		cfg.Region = s.region
	}
	b := newClient(cfg, s)
	b.close = srv.Close
	return b
}

// newClient makes the client of cfg, aimed at -endpoint and recording
// through a bedrocktest.Recorder with -record. The Recorder sits below the
// signer and keeps bodies only, so no credential reaches the recording.
func newClient(cfg aws.Config, s *settings) *backend {
	b := &backend{region: cfg.Region, close: func() {}}
	next := cfg.HTTPClient
	if next == nil {
		next = awshttp.NewBuildableClient()
	}
	var httpClient aws.HTTPClient = plainBodies{next}
	if s.record != "" {
		b.recorder = bedrocktest.NewRecorder(httpClient)
		httpClient = b.recorder
	}
	b.client = bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
		if s.endpoint != "" {
			o.BaseEndpoint = aws.String(s.endpoint)
		}
		o.HTTPClient = httpClient
	})
	return b
}

// plainBodies hides io.WriterTo on request bodies from the transport. The
// SDK closes a ConverseStream request body as soon as the response starts;
// a transport still copying that body through WriterTo then drops the
// connection, and the stream fails with "use of closed network connection"
// now and then (bedrocktest.Server.HTTPClient does the same, for the same
// reason). Read and Close are all a transport needs.
type plainBodies struct{ next aws.HTTPClient }

type plainBody struct{ io.ReadCloser }

func (c plainBodies) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		r = r.Clone(r.Context())
		r.Body = plainBody{r.Body}
	}
	return c.next.Do(r)
}

// save writes the recording of -record, if any.
func (b *backend) save(path string) error {
	if b.recorder == nil {
		return nil
	}
	if err := b.recorder.Save(path); err != nil {
		return fmt.Errorf("-record: %w", err)
	}
	return nil
}
