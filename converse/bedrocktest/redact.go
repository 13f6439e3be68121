package bedrocktest

import "github.com/tooluse/bedrock/converse/internal/redact"

// Redact returns s with AWS credentials and signatures replaced by
// "[REDACTED]": access key IDs (AKIA..., ASIA...), secret access keys and
// session tokens (after names such as aws_secret_access_key,
// SecretAccessKey, X-Amz-Security-Token, aws_session_token or SessionToken,
// and STS session tokens on their own), SigV4 signatures and credentials
// (Signature=, X-Amz-Signature=, Credential=) and the value of an
// Authorization header. Names and punctuation are kept, so redacted JSON is
// still JSON. The Recorder redacts every body and payload it records with
// it; use it on anything else that may hold an AWS error body, such as a
// log line.
func Redact(s string) string {
	return redact.String(s)
}
