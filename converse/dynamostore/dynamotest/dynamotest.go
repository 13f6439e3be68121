// Package dynamotest gives tests of code built on dynamostore DynamoDB and S3
// on loopback, spoken to by the SDK's real clients, as bedrocktest does for
// Bedrock. They are dynalite (npm, a DynamoDB implementation on LevelDB) and
// gofakes3. dynalite is looked for in $DYNALITE_DIR (a directory holding
// dynalite's package, such as node_modules/dynalite). Else it is looked for
// where this module's Makefile installs it (.cache/dynalite). Without it, or
// without node, a test that asks for DynamoDB is skipped saying what is
// missing.
package dynamotest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// DynaliteVersion is the version of dynalite the Makefile installs.
const DynaliteVersion = "4.0.0"

// Credentials are the static credentials of the test clients; the local
// servers take any.
var Credentials = credentials.NewStaticCredentialsProvider("AKIDTEST", "test-secret", "")

var dynalite struct {
	once     sync.Once
	endpoint string
	err      error
	stdin    io.WriteCloser // dynalite's, open until this process exits
}

// script starts dynalite on a free loopback port, prints its address, and
// exits when its stdin closes, so that it never outlives the tests.
const script = `
var server = require(process.argv[1])({createTableMs: 0, deleteTableMs: 0, updateTableMs: 0});
server.listen(0, '127.0.0.1', function () { console.log('http://127.0.0.1:' + server.address().port) });
process.stdin.on('end', function () { process.exit(0) });
process.stdin.resume();
`

// DynamoEndpoint is the URL of the dynalite of this test binary, started at
// its first use; it skips the test, saying what is missing, without node or
// dynalite (see the package doc).
func DynamoEndpoint(t testing.TB) string {
	t.Helper()
	dynalite.once.Do(func() {
		dir := os.Getenv("DYNALITE_DIR")
		if dir == "" {
			_, file, _, _ := runtime.Caller(0) // converse/dynamostore/dynamotest, in this module
			dir = filepath.Join(filepath.Dir(file), "..", "..", "..", ".cache", "dynalite", "node_modules", "dynalite")
		}
		node, err := exec.LookPath("node")
		if err != nil {
			dynalite.err = fmt.Errorf("node is not installed: the DynamoDB tests need it to run dynalite")
			return
		}
		if _, err := os.Stat(filepath.Join(dir, "index.js")); err != nil {
			dynalite.err = fmt.Errorf("dynalite is not installed in %s: run make dynalite (npm install --prefix .cache/dynalite dynalite@%s)", filepath.Clean(dir), DynaliteVersion)
			return
		}
		cmd := exec.Command(node, "-e", script, dir)
		if dynalite.stdin, err = cmd.StdinPipe(); err != nil {
			dynalite.err = err
			return
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			dynalite.err = err
			return
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			dynalite.err = fmt.Errorf("start dynalite: %w", err)
			return
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			dynalite.err = fmt.Errorf("dynalite did not start: %w", err)
			return
		}
		dynalite.endpoint = strings.TrimSpace(line)
	})
	if dynalite.err != nil {
		t.Skip("skipping: " + dynalite.err.Error())
	}
	return dynalite.endpoint
}

// DynamoDB returns a client of the dynalite of this test binary.
func DynamoDB(t testing.TB) *dynamodb.Client {
	t.Helper()
	endpoint := DynamoEndpoint(t)
	return dynamodb.New(dynamodb.Options{Region: "us-east-1", Credentials: Credentials, BaseEndpoint: aws.String(endpoint)})
}

// Name is a fresh name for a table or a bucket.
func Name(prefix string) string {
	var b [6]byte
	rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// Table creates a table with the partition key pk and, if not empty, the
// sort key sk, both strings, and returns its name.
func Table(t testing.TB, db *dynamodb.Client, pk, sk string) string {
	t.Helper()
	name := Name("sessions")
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(pk), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash}},
	}
	if sk != "" {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(sk), AttributeType: types.ScalarAttributeTypeS})
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange})
	}
	if _, err := db.CreateTable(context.Background(), in); err != nil {
		t.Fatalf("create table: %v", err)
	}
	// dynalite makes it active at its next tick (--createTableMs 0); the
	// SDK's TableExists waiter would wait 20 s before looking again.
	for {
		out, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			t.Fatalf("describe table: %v", err)
		}
		if out.Table.TableStatus == types.TableStatusActive {
			return name
		}
		time.Sleep(time.Millisecond)
	}
}

// S3 serves gofakes3 on loopback until the test ends and returns its URL.
func S3(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(srv.Close)
	return srv.URL
}

// S3Client returns a client of the S3 at endpoint, path-style, sending
// through transport (http.DefaultTransport if nil).
func S3Client(endpoint string, transport http.RoundTripper) *s3.Client {
	if transport == nil {
		transport = http.DefaultTransport
	}
	return s3.New(s3.Options{Region: "us-east-1", Credentials: Credentials, BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		HTTPClient: &http.Client{Transport: transport}})
}

// Bucket creates a bucket and returns its name.
func Bucket(t testing.TB, client *s3.Client) string {
	t.Helper()
	name := Name("states")
	if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	return name
}
