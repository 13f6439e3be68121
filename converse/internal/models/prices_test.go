package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPricesOf: each family of the table by its IDs, and the regional
// premium of the newer Claude models. What the table does not confirm has
// no price, whatever prefix it shares with a model that has one.
func TestPricesOf(t *testing.T) {
	opus4 := Prices{15, 75, 1.5, 18.75, 30}
	tests := []struct {
		id   string
		want Prices
		ok   bool
	}{
		{"anthropic.claude-opus-4-20250514-v1:0", opus4, true},
		{"us.anthropic.claude-opus-4-1-20250805-v1:0", opus4, true},
		{"global.anthropic.claude-opus-4-5-20251101-v1:0", Prices{5, 25, 0.5, 6.25, 10}, true},
		{"global.anthropic.claude-opus-4-6-v1", Prices{5, 25, 0.5, 6.25, 10}, true},
		{"us.anthropic.claude-opus-4-6-v1", Prices{5.5, 27.5, 0.55, 6.875, 11}, true},
		{"anthropic.claude-sonnet-4-20250514-v1:0", Prices{3, 15, 0.3, 3.75, 6}, true},
		{"global.anthropic.claude-sonnet-4-6", Prices{3, 15, 0.3, 3.75, 6}, true},
		{"eu.anthropic.claude-sonnet-4-5-20250929-v1:0", Prices{3.3, 16.5, 0.33, 4.125, 6.6}, true},
		{"arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-7-sonnet-20250219-v1:0", Prices{3, 15, 0.3, 3.75, 6}, true},
		{"global.anthropic.claude-haiku-4-5-20251001-v1:0", Prices{1, 5, 0.1, 1.25, 2}, true},
		{"anthropic.claude-3-5-haiku-20241022-v1:0", Prices{0.8, 4, 0.08, 1, 1.6}, true},
		{"anthropic.claude-3-haiku-20240307-v1:0", Prices{0.25, 1.25, 0, 0, 0}, true},
		{"us.amazon.nova-premier-v1:0", Prices{2.5, 12.5, 0.625, 2.5, 0}, true},
		{"amazon.nova-pro-v1:0", Prices{0.8, 3.2, 0.2, 0.8, 0}, true},
		{"amazon.nova-lite-v1:0", Prices{0.06, 0.24, 0.015, 0.06, 0}, true},
		{"amazon.nova-micro-v1:0", Prices{0.035, 0.14, 0.00875, 0.035, 0}, true},
		// Not confirmed, so unknown: no price is better than a wrong one.
		{"anthropic.claude-3-5-sonnet-20240620-v1:0", Prices{}, false},
		{"anthropic.claude-3-5-sonnet-20241022-v2:0", Prices{}, false},
		{"global.anthropic.claude-opus-4-7", Prices{5, 25, 0.5, 6.25, 10}, true},
		{"us.anthropic.claude-opus-4-8", Prices{5.5, 27.5, 0.55, 6.875, 11}, true},
		{"global.anthropic.claude-opus-5", Prices{5, 25, 0.5, 6.25, 10}, true},
		{"global.anthropic.claude-sonnet-5", Prices{2, 10, 0.2, 2.5, 4}, true},
		{"us.anthropic.claude-sonnet-5-5", Prices{2.2, 11, 0.22, 2.75, 4.4}, true},
		{"global.anthropic.claude-fable-5", Prices{10, 50, 1, 12.5, 20}, true},
		{"global.anthropic.claude-fable-5-1", Prices{10, 50, 0.25, 12.5, 20}, true},
		{"global.anthropic.claude-opus-5-5", Prices{}, false},  // not Opus 5's $5
		{"global.anthropic.claude-fable-5-2", Prices{}, false}, // not Fable 5's $10
		{"global.anthropic.claude-haiku-5-5", Prices{}, false}, // priced by prompt length
		{"anthropic.claude-sonnet-4-7", Prices{}, false},
		{"global.amazon.nova-2-lite-v1:0", Prices{}, false},
		{"meta.llama3-70b-instruct-v1:0", Prices{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got, ok := PricesOf(tt.id)
			assert.Equal(t, tt.ok, ok)
			assert.InDelta(t, tt.want.Input, got.Input, 1e-9)
			assert.InDelta(t, tt.want.Output, got.Output, 1e-9)
			assert.InDelta(t, tt.want.CacheRead, got.CacheRead, 1e-9)
			assert.InDelta(t, tt.want.CacheWrite, got.CacheWrite, 1e-9)
			assert.InDelta(t, tt.want.CacheWrite1h, got.CacheWrite1h, 1e-9)
		})
	}
}
