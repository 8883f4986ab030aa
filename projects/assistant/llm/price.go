package llm

import (
	"fmt"
	"math"
	"strings"
)

// Price is what a model of a provider costs, in USD per million tokens,
// as its operator configures it (providers: prices, or --provider
// price=MODEL:IN:OUT). A project never sets a price: what a call cost is
// the node operator's account, not the caller's claim.
type Price struct {
	InputPerMTok  float64 `json:"input_per_mtok"`
	OutputPerMTok float64 `json:"output_per_mtok"`
}

// validate says what is wrong with the price of model at provider.
func (p Price) validate(provider, model string) error {
	if strings.TrimSpace(model) == "" {
		return fmt.Errorf("provider %s: a price for an empty model name: key each price by the model's name as projects ask for it", provider)
	}
	for _, v := range []struct {
		name string
		usd  float64
	}{{"input_per_mtok", p.InputPerMTok}, {"output_per_mtok", p.OutputPerMTok}} {
		if v.usd < 0 || math.IsNaN(v.usd) || math.IsInf(v.usd, 0) {
			return fmt.Errorf("provider %s: prices of %s: %s %v is not an amount: give USD per million tokens, 0 or more (e.g. 2.5)", provider, model, v.name, v.usd)
		}
	}
	return nil
}

// Cost returns what usage of model cost at e, in USD, and false when its
// operator gave the model no price. It is rounded to a billionth of a
// dollar, so that sums read as amounts and not as float noise.
func (e Endpoint) Cost(model string, u Usage) (float64, bool) {
	p, ok := e.Prices[model]
	if !ok {
		return 0, false
	}
	usd := (float64(u.InputTokens)*p.InputPerMTok + float64(u.OutputTokens)*p.OutputPerMTok) / 1e6
	return math.Round(usd*1e9) / 1e9, true
}
