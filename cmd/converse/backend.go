package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/smithy-go/logging"

	"github.com/tooluse/bedrock/converse/recording"
)

// credentialsTimeout bounds the search for credentials, so that a machine
// without any fails fast instead of waiting on the EC2 metadata service.
const credentialsTimeout = 10 * time.Second

// backend is where the model calls go: Bedrock, a custom endpoint, or a
// replay of a recording served in-process.
type backend struct {
	client   *bedrockruntime.Client
	region   string
	recorder *recording.Recorder // nil without -record
	// auth says how the requests are authenticated, for -v; "" for a
	// replay, which sends none.
	auth  string
	close func()
	// retried, when set (by -v), hears of each retry of a model call.
	retried func(attempt int, wait time.Duration, why error)
}

// tracingRetryer is the SDK's retryer, telling its backend of each retry:
// the SDK's own log says only "retrying request", not how long it waits
// or why.
type tracingRetryer struct {
	aws.RetryerV2
	b *backend
}

func (r tracingRetryer) RetryDelay(attempt int, err error) (time.Duration, error) {
	wait, derr := r.RetryerV2.RetryDelay(attempt, err)
	if derr == nil && r.b.retried != nil {
		r.b.retried(attempt, wait, err)
	}
	return wait, derr
}

// bearerTokenVariable holds a Bedrock API key. The Bedrock Runtime client
// reads it itself (resolveEnvBearerToken) and then prefers bearer auth to
// SigV4, whatever other credentials there are.
const bearerTokenVariable = "AWS_BEARER_TOKEN_BEDROCK"

// newBackend builds the Bedrock Runtime client the flags ask for. rec is the
// -replay recording, or nil.
func newBackend(ctx context.Context, s *settings, rec *recording.Recording) (*backend, error) {
	if rec != nil {
		return replayBackend(s, rec), nil
	}
	var opts []func(*config.LoadOptions) error
	if isLoopback(s.endpoint) {
		// A local server: the metadata service, which can take seconds
		// to fail off EC2, is never asked.
		opts = append(opts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := loadConfig(ctx, s, opts...)
	if err != nil {
		return nil, err
	}
	auth, err := authenticate(ctx, s, &cfg)
	if err != nil {
		return nil, err
	}
	b := newClient(cfg, s)
	b.auth = auth
	return b, nil
}

// authenticate picks how the requests of cfg are authenticated, and says how
// for -v. It uses a Bedrock API key if there is one, else SigV4 credentials,
// which must be found. A local endpoint is the exception: it gets unsigned
// requests unless credentials are asked for by name.
func authenticate(ctx context.Context, s *settings, cfg *aws.Config) (string, error) {
	const none = "none: the requests to the local endpoint are unsigned"
	if os.Getenv(bearerTokenVariable) != "" {
		endpoint, named := bedrockEndpoint(s, *cfg)
		switch {
		case !plainHTTP(endpoint):
			// The client takes it itself; no other credential is needed.
			return "a Bedrock API key (" + bearerTokenVariable + ")", nil
		case isLoopback(endpoint):
			anonymous(cfg)
			return none + " (a Bedrock API key in " + bearerTokenVariable + " is sent over HTTPS only)", nil
		}
		return "", usagef("%s: a Bedrock API key (%s) is sent over HTTPS only: use an https URL", named, bearerTokenVariable)
	}
	if isLoopback(s.endpoint) && !explicitCredentials(s) {
		anonymous(cfg)
		return none, nil
	}
	source, err := checkCredentials(ctx, *cfg)
	if err != nil {
		if !isLoopback(s.endpoint) || ctx.Err() != nil {
			return "", err
		}
		anonymous(cfg)
		return none, nil
	}
	return "AWS credentials (SigV4) from " + source, nil
}

// bedrockEndpoint is the endpoint the Bedrock client of s and cfg calls, ""
// for Bedrock's own, and its name for a message. It is -endpoint, else one the
// configuration names, which the SDK reads as it builds the client.
func bedrockEndpoint(s *settings, cfg aws.Config) (endpoint, named string) {
	if s.endpoint != "" {
		return s.endpoint, "-endpoint " + s.endpoint
	}
	endpoint = aws.ToString(bedrockruntime.NewFromConfig(cfg).Options().BaseEndpoint)
	return endpoint, "the Bedrock endpoint " + endpoint + " of the configuration (AWS_ENDPOINT_URL_BEDROCK_RUNTIME, AWS_ENDPOINT_URL or the profile's endpoint_url)"
}

// explicitCredentials reports whether SigV4 credentials were asked for by
// name: -profile, AWS_PROFILE or AWS_ACCESS_KEY_ID. Only then are the
// requests to a local endpoint signed; otherwise the credentials of the
// default profile or of an SSO login stay off a server on this machine.
// (A Bedrock API key in AWS_BEARER_TOKEN_BEDROCK is named as well, and
// always sent.)
func explicitCredentials(s *settings) bool {
	return s.profile != "" || os.Getenv("AWS_PROFILE") != "" || os.Getenv("AWS_ACCESS_KEY_ID") != ""
}

// anonymous makes cfg's requests unsigned: a local server, such as
// bedrocktest's, needs no account. Without the preference for noAuth, the
// client picks bearer auth with no token provider, and panics; newClient
// keeps the preference over the client's own for AWS_BEARER_TOKEN_BEDROCK.
func anonymous(cfg *aws.Config) {
	cfg.Credentials = aws.AnonymousCredentials{}
	cfg.AuthSchemePreference = []string{"noAuth"}
}

// loadConfig loads the AWS configuration the flags ask for (-region,
// -profile), which the Bedrock client and the Lambda client of manifest
// tools share, with opts after those.
func loadConfig(ctx context.Context, s *settings, opts ...func(*config.LoadOptions) error) (aws.Config, error) {
	// The SDK's own warnings (such as an IMDS fallback) are noise unless
	// asked for; failures are reported anyway. With -v they go where
	// converse's other diagnostics go, made visible and redacted, never
	// to os.Stderr as they are: a warning can quote what a server sent.
	var logger logging.Logger = logging.Nop{}
	if s.verbose && s.diagnostics != nil {
		logger = logging.NewStandardLogger(s.diagnostics)
	}
	// No request, response or signing log, whatever -v: they print the
	// Authorization, X-Amz-Security-Token and X-Amz-Signature values.
	opts = append(opts, config.WithLogger(logger), config.WithClientLogMode(0))
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
			return aws.Config{}, usagef("profile %q is in neither ~/.aws/config nor ~/.aws/credentials: %w", missing.Profile, err)
		}
		return aws.Config{}, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = defaultRegion
	}
	return cfg, nil
}

// plainHTTP reports whether endpoint, an -endpoint URL, is http, not https.
func plainHTTP(endpoint string) bool {
	u, err := url.Parse(endpoint)
	return err == nil && u.Scheme == "http"
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
// that a missing configuration is reported as such, and quickly. It
// returns where they were found, such as "EnvConfigCredentials".
func checkCredentials(ctx context.Context, cfg aws.Config) (string, error) {
	if cfg.Credentials == nil {
		return "", noCredentials(errors.New("no credential provider"))
	}
	lookup, cancel := context.WithTimeout(ctx, credentialsTimeout)
	defer cancel()
	creds, err := cfg.Credentials.Retrieve(lookup)
	if err != nil {
		if ctx.Err() != nil {
			return "", failf(ctx.Err(), "interrupted") // while looking: not a missing configuration
		}
		return "", noCredentials(err)
	}
	return creds.Source, nil
}

// replayBackend serves rec in process, with a recording.Replayer: no
// request leaves the process. Unless -replay-lenient, each request must
// match the recorded one, but for the results of get_current_datetime,
// which change from run to run.
func replayBackend(s *settings, rec *recording.Recording) *backend {
	replayer := recording.NewReplayer(rec, func(o *recording.ReplayOptions) {
		o.Lenient = s.replayLenient
		o.IgnoreToolResults = []string{"get_current_datetime"}
	})
	region := s.region
	if region == "" {
		region = defaultRegion
	}
	cfg := aws.Config{
		Region:      region,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDREPLAY", "replay", ""),
		HTTPClient:  replayer,
	}
	return newClient(cfg, s)
}

// newClient makes the client of cfg, aimed at -endpoint and recording
// through a recording.Recorder with -record. The Recorder sits below the
// signer and keeps bodies only, so no credential reaches the recording.
// Either way request bodies go through recording.PlainBodies, which a
// local endpoint needs.
func newClient(cfg aws.Config, s *settings) *backend {
	b := &backend{region: cfg.Region, close: func() {}}
	httpClient := recording.PlainBodies(cfg.HTTPClient)
	if s.record != "" {
		b.recorder = recording.NewRecorder(cfg.HTTPClient)
		httpClient = b.recorder
	}
	b.client = bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
		if s.endpoint != "" {
			o.BaseEndpoint = aws.String(s.endpoint)
		}
		o.HTTPClient = httpClient
		if r, ok := o.Retryer.(aws.RetryerV2); ok {
			o.Retryer = tracingRetryer{r, b}
		}
		if _, ok := cfg.Credentials.(aws.AnonymousCredentials); ok {
			o.AuthSchemePreference = cfg.AuthSchemePreference
			o.BearerAuthTokenProvider = nil
		}
	})
	return b
}

// save writes the recording of -record, if any.
func (b *backend) save(path string) error {
	if b.recorder == nil {
		return nil
	}
	if err := b.recorder.Save(path); err != nil {
		// Save writes a temporary file beside path first: name the
		// user's file, not that one.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return &restated{fmt.Sprintf("-record %s: %v", path, pe.Err), err}
		}
		return fmt.Errorf("-record %s: %w", path, err)
	}
	return nil
}
