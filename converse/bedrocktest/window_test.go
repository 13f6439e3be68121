package bedrocktest

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestContextWindow(t *testing.T) {
	srv := NewServer(HandlerFunc(func(ctx context.Context, req *Request) (*Reply, error) { return Text("ok"), nil }),
		func(o *Options) { o.MaxInputTokens = 1000 })
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()

	small := &bedrockruntime.ConverseInput{ModelId: aws.String(testModel), Messages: []types.Message{user(text("hi"))}}
	_, err := client.Converse(ctx, small)
	require.NoError(t, err)

	big := &bedrockruntime.ConverseInput{ModelId: aws.String(testModel), Messages: []types.Message{user(text(strings.Repeat("word ", 1000)))}}
	_, err = client.Converse(ctx, big)
	var ve *types.ValidationException
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Input is too long for requested model.", ve.ErrorMessage())

	_, err = client.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: big.ModelId, Messages: big.Messages})
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Input is too long for requested model.", ve.ErrorMessage())
}

func TestCountTokens(t *testing.T) {
	srv := NewServer(Script(), func(o *Options) { o.MaxInputTokens = 1000 })
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()
	msgs := []types.Message{user(text("What is the weather in Paris?"))}

	out, err := client.CountTokens(ctx, &bedrockruntime.CountTokensInput{
		ModelId: aws.String(testModel),
		Input:   &types.CountTokensInputMemberConverse{Value: types.ConverseTokensRequest{Messages: msgs, ToolConfig: weatherTools()}},
	})
	require.NoError(t, err)
	want := EstimateTokens(&Request{ConverseInput: bedrockruntime.ConverseInput{Messages: msgs, ToolConfig: weatherTools()}})
	assert.Equal(t, int32(want), aws.ToInt32(out.InputTokens))
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, OpCountTokens, reqs[0].Operation)
	assert.Equal(t, msgs[0].Content, reqs[0].Messages[0].Content)

	_, err = client.CountTokens(ctx, &bedrockruntime.CountTokensInput{
		ModelId: aws.String(testModel),
		Input:   &types.CountTokensInputMemberConverse{Value: types.ConverseTokensRequest{Messages: []types.Message{user(text(strings.Repeat("word ", 1000)))}}},
	})
	var ve *types.ValidationException
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Input is too long for requested model.", ve.ErrorMessage())

	_, err = client.CountTokens(ctx, &bedrockruntime.CountTokensInput{
		ModelId: aws.String(testModel),
		Input:   &types.CountTokensInputMemberConverse{Value: types.ConverseTokensRequest{Messages: []types.Message{user(text("a")), user(text("b"))}}},
	})
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, ve.ErrorMessage(), "must alternate")
}
