package node

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/assistant"
	"github.com/jido-bus/jido-bus/projects/assistant/llm"
)

// pricedModel answers every call with the same text and usage.
type pricedModel struct{ usage llm.Usage }

func (p pricedModel) Complete(context.Context, llm.Request, func(llm.Delta)) (llm.Response, error) {
	return llm.Response{Text: "ok", Usage: p.usage, StopReason: "stop"}, nil
}

// TestAssistantCostAndBudget: a model the operator priced makes each
// llm.completed record cost_usd from the usage the provider reported;
// the node's metrics count tokens and cost per project and model; a
// conversation whose cost budget is reached ends its turn with
// conversation.budget.exceeded, and its next message gets another and
// no model call.
func TestAssistantCostAndBudget(t *testing.T) {
	n, err := Start(context.Background(), Config{
		DataDir: t.TempDir(), NATS: NATSConfig{Listen: "127.0.0.1:0"}, NoSync: true,
		Assistant: func(c *assistant.Config) {
			c.Providers = append(llm.DefaultEndpoints(), llm.Endpoint{Name: "priced", Kind: llm.ProviderOpenAI,
				Prices: map[string]llm.Price{"m1": {InputPerMTok: 1, OutputPerMTok: 2}}})
			c.NewProvider = func(assistant.LLMSettings, string) (llm.Provider, error) {
				return pricedModel{usage: llm.Usage{InputTokens: 1000, OutputTokens: 500}}, nil
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	ctx := context.Background()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".jido"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".jido", "config.yaml"), []byte("llm:\n  provider: priced\n  model: m1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Projects().Open(ctx, projects.OpenRequest{Root: root, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Conversations().Start(ctx, convapi.StartRequest{Project: "p1", Conversation: "c1", Budget: &conversation.Budget{MaxCostUSD: 0.003}}); err != nil {
		t.Fatal(err)
	}
	send := func(text string) {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"conv": "p1/c1", "text": text})
		if _, err := n.convSend(ctx, body); err != nil {
			t.Fatal(err)
		}
	}
	send("one")
	first := awaitEvent(t, n, "p1/c1", conversation.LLMCompleted, nil)
	if d := dataOf(t, first); d["cost_usd"] != 0.002 {
		t.Fatalf("llm.completed %v, want cost_usd 0.002 (1000 in at 1 USD, 500 out at 2 USD per million)", d)
	}
	send("two")
	exceeded := awaitEvent(t, n, "p1/c1", conversation.BudgetExceeded, nil)
	if d := dataOf(t, exceeded); d["what"] != "cost" || d["limit"] != 0.003 || d["used"] != 0.004 {
		t.Fatalf("budget.exceeded %v, want cost 0.004 of 0.003", d)
	}
	send("three")
	awaitEvent(t, n, "p1/c1", conversation.BudgetExceeded, func(e eventlog.Entry) bool { return e.Event.ID() != exceeded.Event.ID() })
	var requested int
	for _, e := range convEvents(t, n, "p1/c1") {
		if e.Event.Type() == conversation.LLMRequested {
			requested++
		}
	}
	if requested != 2 {
		t.Fatalf("%d LLM calls, want 2: none after the budget is spent\n%s", requested, typesOf(convEvents(t, n, "p1/c1")))
	}
	tokens := series(t, n, "jido_llm_tokens_total")
	if tokens["direction=input,model=m1,project=p1"] != 2000 || tokens["direction=output,model=m1,project=p1"] != 1000 {
		t.Fatalf("jido_llm_tokens_total %v, want 2000 in and 1000 out for p1 m1", tokens)
	}
	if cost := series(t, n, "jido_llm_cost_usd_total"); cost["model=m1,project=p1"] != 0.004 {
		t.Fatalf("jido_llm_cost_usd_total %v, want 0.004 for p1 m1", cost)
	}
	if strings.Contains(typesOf(convEvents(t, n, "p1/c1")), "failed") {
		t.Fatalf("a failure in %s", typesOf(convEvents(t, n, "p1/c1")))
	}
}
