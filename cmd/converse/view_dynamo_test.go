package main

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/dynamostore/dynamotest"
)

// TestViewOfDynamoSession: converse view dynamodb://TABLE/ID draws the session
// that -session dynamodb://TABLE/ID kept in dynalite. The session is in its
// item or, past DynamoDB's item limit, in the S3 object the item names. The
// view leaves the item as it was: no lease taken, nothing written. A session
// or table that is not there is a usage error naming it.
func TestViewOfDynamoSession(t *testing.T) {
	db := dynamotest.DynamoDB(t)
	table := dynamotest.Table(t, db, "id", "")
	s3URL := dynamotest.S3(t)
	bucket := dynamotest.Bucket(t, dynamotest.S3Client(s3URL, nil))
	setTestEnv(t)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", dynamotest.DynamoEndpoint(t))
	t.Setenv("AWS_ENDPOINT_URL_S3", s3URL)
	item := func(id string) map[string]dbtypes.AttributeValue {
		out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table),
			Key: map[string]dbtypes.AttributeValue{"id": &dbtypes.AttributeValueMemberS{Value: id}}, ConsistentRead: aws.Bool(true)})
		require.NoError(t, err)
		return out.Item
	}
	big := incompressible(600 << 10)
	for _, tt := range []struct {
		name, id string
		args     []string
		script   bedrocktest.Handler
		offload  bool
	}{
		{"in the item", "calc", nil, multiply(), false},
		{"in S3", "big", []string{"-session-bucket", bucket}, bedrocktest.Script(bedrocktest.Text(big)), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			session := "dynamodb://" + table + "/" + tt.id
			srv := newServer(t, tt.script)
			out := runInProcess(t, nil, append(append([]string{"-endpoint", srv.URL, "-session", session}, tt.args...), "What is 6 times 7?")...)
			require.Equal(t, 0, out.code, out.stderr)
			before := item(tt.id)
			require.NotNil(t, before)
			_, offloaded := before["bucket"]
			if segments, ok := before["segments"].(*dbtypes.AttributeValueMemberL); ok {
				for _, seg := range segments.Value { // the history's segments, which the item lists
					_, inS3 := seg.(*dbtypes.AttributeValueMemberM).Value["bucket"]
					offloaded = offloaded || inS3
				}
			}
			require.Equal(t, tt.offload, offloaded, "the state in S3")

			doc := parseHTML(t, renderView(t, session))
			assert.Equal(t, "session", text(byID(t, doc, "kind")))
			assert.Contains(t, text(findAll(doc, func(n *html.Node) bool { return n.Data == "h1" })[0]), session)
			assert.NotContains(t, text(byID(t, doc, "turn-1")), "model call unknown", "the session's times")
			assert.Equal(t, before, item(tt.id), "the item is unchanged")
		})
	}
	for _, tt := range []struct{ input, stderr string }{
		{"dynamodb://" + table + "/nobody", "converse: view: dynamodb://" + table + "/nobody: no such session in the table\n"},
		{"dynamodb://no-such-table/calc", "converse: view: dynamodb://no-such-table/calc: the DynamoDB table no-such-table does not exist"},
		{"dynamodb://" + table, "converse: view: dynamodb://" + table + ": want dynamodb://TABLE/SESSION-ID\n"},
	} {
		out := runInProcess(t, nil, "view", tt.input)
		assert.Equal(t, 2, out.code, out.stderr)
		assert.Contains(t, out.stderr, tt.stderr)
	}
}

// TestViewNestedDynamoSession: a call that a manifest's agent entry ran
// with -session dynamodb://TABLE/ID has the agent's conversation, the
// item ID.TOOLUSEID, under it.
func TestViewNestedDynamoSession(t *testing.T) {
	db := dynamotest.DynamoDB(t)
	table := dynamotest.Table(t, db, "id", "")
	setTestEnv(t)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", dynamotest.DynamoEndpoint(t))
	manifest := writeManifest(t, `{"tools": [{"name": "researcher", "description": "Researches.", "model": "`+agentModel+`"}]}`)
	srv := newServer(t, &byModel{
		coordinator: bedrocktest.Script(
			bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "researcher", Input: map[string]any{"task": "find n"}}),
			bedrocktest.Text("done"),
		),
		agent: bedrocktest.Script(bedrocktest.Text("n is 1")),
	})
	session := "dynamodb://" + table + "/coord"
	out := runInProcess(t, nil, "-endpoint", srv.URL, "-tools", manifest, "-session", session, "go")
	require.Equal(t, 0, out.code, out.stderr)

	doc := parseHTML(t, renderView(t, session))
	agent := byID(t, doc, "call-1-1-agent")
	mustContain(t, "the agent's conversation", text(agent), "session coord.t1", agentModel, "1 turn, 0 calls", "n is 1")
	assert.Contains(t, text(byID(t, doc, "call-1-1-turn-1")), "stop end_turn")
}
