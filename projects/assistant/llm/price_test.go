package llm

import (
	"math"
	"strings"
	"testing"
)

// TestEndpointCost: usage priced per million tokens, rounded to a
// billionth of a dollar; a model without a price has no cost.
func TestEndpointCost(t *testing.T) {
	e := Endpoint{Name: "x", Kind: ProviderOpenAI, Prices: map[string]Price{"m": {InputPerMTok: 0.15, OutputPerMTok: 0.6}, "free": {}}}
	if usd, ok := e.Cost("m", Usage{InputTokens: 1000, OutputTokens: 500}); !ok || usd != 0.00045 {
		t.Fatalf("cost of m: %v %v, want 0.00045 (1000 × 0.15 + 500 × 0.6 per million)", usd, ok)
	}
	if usd, ok := e.Cost("free", Usage{InputTokens: 1e6, OutputTokens: 1e6}); !ok || usd != 0 {
		t.Fatalf("cost of a model priced 0: %v %v, want 0 and a price", usd, ok)
	}
	if _, ok := e.Cost("other", Usage{InputTokens: 1}); ok {
		t.Fatal("a model without a price has a cost")
	}
}

// TestEndpointValidatesPrices: a negative or non-finite amount, or a
// price keyed by no model, is refused naming the provider and what to
// give.
func TestEndpointValidatesPrices(t *testing.T) {
	cases := []struct {
		prices map[string]Price
		want   string
	}{
		{map[string]Price{"m": {InputPerMTok: -1}}, "input_per_mtok -1"},
		{map[string]Price{"m": {OutputPerMTok: math.Inf(1)}}, "output_per_mtok +Inf"},
		{map[string]Price{"m": {InputPerMTok: math.NaN()}}, "input_per_mtok NaN"},
		{map[string]Price{" ": {}}, "empty model name"},
	}
	for _, c := range cases {
		err := Endpoint{Name: "x", Kind: ProviderOpenAI, Prices: c.prices}.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "provider x") {
			t.Errorf("%+v: %v, want it to say %q", c.prices, err, c.want)
		}
	}
	if err := (Endpoint{Name: "x", Kind: ProviderOpenAI, Prices: map[string]Price{"m": {InputPerMTok: 2.5, OutputPerMTok: 10}}}).Validate(); err != nil {
		t.Fatal(err)
	}
}
