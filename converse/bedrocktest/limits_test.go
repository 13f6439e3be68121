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

func TestMaxRequestBytes(t *testing.T) {
	srv := NewServer(Script(Text("small enough")), func(o *Options) { o.MaxRequestBytes = 1 << 10 })
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()

	_, err := client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId: aws.String(testModel), Messages: []types.Message{userText(strings.Repeat("x", 1<<20))},
	})
	var ve *types.ValidationException
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Input is too long for requested model.", ve.ErrorMessage())
	require.Len(t, srv.Requests(), 1) // not retried
	assert.Equal(t, []byte(nil), srv.Requests()[0].Body)

	// A request within the limit goes to the handler.
	_, err = client.Converse(ctx, converseInput())
	assert.NoError(t, err)
}

func TestMaxRequests(t *testing.T) {
	tests := []struct {
		name string
		max  *int
		sent int
		want []string // the texts of the requests kept
	}{
		{"last n", ptr(2), 3, []string{"2", "3"}},
		{"none", ptr(0), 2, nil},
		{"all", ptr(-1), 3, []string{"1", "2", "3"}},
		{"default", nil, 3, []string{"1", "2", "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewServer(HandlerFunc(func(ctx context.Context, req *Request) (*Reply, error) {
				return Text("ok"), nil
			}), func(o *Options) {
				if tt.max != nil {
					o.MaxRequests = *tt.max
				}
			})
			defer srv.Close()
			client := srv.Client()
			for i := range tt.sent {
				_, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{
					ModelId: aws.String(testModel), Messages: []types.Message{userText(string(rune('1' + i)))},
				})
				require.NoError(t, err)
			}
			var got []string
			for _, r := range srv.Requests() {
				got = append(got, r.Messages[0].Content[0].(*types.ContentBlockMemberText).Value)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func ptr(n int) *int { return &n }
