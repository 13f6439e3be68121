package mcptools

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// SigV4 is an http.RoundTripper that signs each request with AWS Signature
// Version 4, the SDK's v4 signer, before Next sends it. It serves an MCP
// server behind an Amazon Bedrock AgentCore Gateway with IAM authorization
// (Service "bedrock-agentcore"), or any endpoint that takes SigV4. Set it
// as the Transport of Server.HTTPClient:
//
//	srv := mcptools.Server{Name: "gateway", URL: gatewayURL, HTTPClient: &http.Client{
//		Transport: &mcptools.SigV4{Credentials: cfg.Credentials, Service: "bedrock-agentcore", Region: "us-east-1"}}}
//
// Every request, each retry and reconnection included, is signed afresh, at
// the time it is sent, over a hash of its body. It is signed with the
// credentials Credentials gives then (an aws.Config's are cached and refreshed
// before they expire). Server.Headers are set before the signing, so they are
// signed too. Nothing of the credentials or the signature is logged. Under a
// Server, SigV4 signs requests to the origin of Server.URL only: a redirect,
// or any request elsewhere, is refused before it is signed.
type SigV4 struct {
	Credentials aws.CredentialsProvider
	Service     string
	Region      string
	// Next sends the signed requests; nil means http.DefaultTransport.
	Next http.RoundTripper
}

// RoundTrip signs a copy of req and sends it.
func (s *SigV4) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	body, err := readBody(req)
	if err != nil {
		return nil, fmt.Errorf("mcptools: sigv4: reading the request body: %w", err)
	}
	signed := req.Clone(req.Context())
	if body != nil {
		signed.Body = io.NopCloser(bytes.NewReader(body))
		signed.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		signed.ContentLength = int64(len(body))
	}
	if s.Credentials == nil {
		return nil, fmt.Errorf("mcptools: sigv4: no credentials provider")
	}
	creds, err := s.Credentials.Retrieve(req.Context())
	if err != nil {
		return nil, fmt.Errorf("mcptools: sigv4: credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(req.Context(), creds, signed, hex.EncodeToString(sum[:]), s.Service, s.Region, time.Now()); err != nil {
		return nil, fmt.Errorf("mcptools: sigv4: %w", err)
	}
	next := s.Next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(signed)
}

// readBody reads and closes the body of req, nil if it has none.
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}
