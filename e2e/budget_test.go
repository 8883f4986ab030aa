package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// replayVerifies runs log replay --verify on conv's stream and fails
// unless every decision is re-decided as logged.
func (r *assistantRig) replayVerifies(t *testing.T, conv string) {
	t.Helper()
	out, stderr, err := tryRun("log", "replay", "conversation/"+conv, "--verify", "--nats-url", r.node.URL)
	if err != nil || !strings.Contains(out, "verified") || strings.Contains(out+stderr, "diverge") {
		t.Fatalf("log replay conversation/%s --verify: %v\n%s%s", conv, err, out, stderr)
	}
}

// showSays waits until conv show --view view of conv says every one of
// want: the read models follow the log, a moment behind it.
func (r *assistantRig) showSays(t *testing.T, conv, view string, want ...string) {
	t.Helper()
	testkit.EventuallyNil(t, "conv show --view "+view+" of "+conv, func() error {
		out := r.run(t, "conv", "show", conv, "--view", view)
		for _, w := range want {
			if !strings.Contains(out, w) {
				return fmt.Errorf("it does not say %q:\n%s", w, out)
			}
		}
		return nil
	})
}

// TestBudgetTokensThroughTheBinary: a conversation started with
// --max-tokens, on the scripted model whose lines carry usage, stops at
// the call that reaches it: conversation.budget.exceeded, that answer's
// tool call failed budget_exceeded and never run, no model asked again;
// a later message gets another budget.exceeded and no LLM call; conv show
// and conv ls show the totals; log replay --verify re-decides it all
// without a model.
func TestBudgetTokensThroughTheBinary(t *testing.T) {
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.restart(t)
	root := rig.newAssistantProject(t, "spend", "", []string{
		`{"text":"Reading.","tool_calls":[{"id":"r1","name":"read_file","args":{"path":"notes.txt"}}],"usage":{"input_tokens":40,"output_tokens":20}}`,
		`{"text":"Writing.","tool_calls":[{"id":"w1","name":"write_file","args":{"path":"out.txt","content":"spent"}}],"usage":{"input_tokens":30,"output_tokens":20}}`,
		`{"text":"never asked","usage":{"input_tokens":1,"output_tokens":1}}`,
	}, map[string]string{"notes.txt": "hello\n"})
	rig.run(t, "conv", "start", "spend", "--id", "c1", "--max-tokens", "100")
	conv := "spend/c1"
	rig.run(t, "conv", "send", conv, "write it out")
	es := rig.await(t, conv, "the budget spent and its tool call closed", func(es convEvents) bool {
		return len(es.of("conversation.budget.exceeded")) == 1 && len(es.call("conversation.tool.failed", "w1")) == 1
	})
	if !es.has("conversation.budget.exceeded", `"what":"tokens"`, `"limit":100`, `"used":110`) {
		t.Fatalf("budget.exceeded does not say 110 of 100 tokens:\n%s", es)
	}
	if !es.has("conversation.tool.failed", `"budget_exceeded"`) || len(es.call("conversation.tool.started", "w1")) != 0 {
		t.Fatalf("w1 ran or failed otherwise than budget_exceeded:\n%s", es)
	}
	if m, _ := filepath.Glob(filepath.Join(root, "out.txt")); len(m) != 0 {
		t.Fatalf("out.txt was written after the budget was spent")
	}
	rig.run(t, "conv", "send", conv, "go on anyway")
	es = rig.await(t, conv, "the second message refused", func(es convEvents) bool {
		return len(es.of("conversation.budget.exceeded")) == 2
	})
	if n := len(es.of("conversation.llm.requested")); n != 2 {
		t.Fatalf("%d LLM calls, want 2: none after the budget is spent\n%s", n, es)
	}

	rig.showSays(t, conv, "status", "state: budget_exceeded", "tokens: in 70, out 40", "budget: 100 tokens (spent: tokens)")
	rig.showSays(t, conv, "diagnostics", "demo: in 70, out 40")
	var ls struct {
		Conversations []struct {
			Conv      string  `json:"conv"`
			State     string  `json:"state"`
			TokensIn  int64   `json:"tokens_in"`
			TokensOut int64   `json:"tokens_out"`
			CostUSD   float64 `json:"cost_usd"`
		} `json:"conversations"`
	}
	out := rig.run(t, "conv", "ls", "-o", "json")
	if err := json.Unmarshal([]byte(out), &ls); err != nil || len(ls.Conversations) != 1 {
		t.Fatalf("conv ls -o json: %v\n%s", err, out)
	}
	if c := ls.Conversations[0]; c.Conv != conv || c.State != "budget_exceeded" || c.TokensIn != 70 || c.TokensOut != 40 {
		t.Fatalf("conv ls: %+v, want %s budget_exceeded with 70 in and 40 out", c, conv)
	}
	if table := rig.run(t, "conv", "ls"); !strings.Contains(table, "TOKENS IN") || !strings.Contains(table, "budget_exceeded") {
		t.Errorf("conv ls table:\n%s", table)
	}
	rig.replayVerifies(t, conv)

	// A fork goes on: its budget counts its own calls, not the history
	// it copied.
	seq := es.of("conversation.budget.exceeded")[0].Seq
	rig.run(t, "conv", "fork", conv, "--at", fmt.Sprint(seq), "--as", "spend/c2")
	rig.run(t, "conv", "send", "spend/c2", "once more")
	rig.awaitAnswer(t, "spend/c2", "never asked")
	rig.replayVerifies(t, "spend/c2")
}

// fakeOpenAI is a model server speaking OpenAI's streaming Chat
// Completions: every call answers "priced answer" with the usage given.
func fakeOpenAI(t *testing.T, in, out int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(s string) { fmt.Fprintf(w, "data: %s\n\n", s) }
		head := `{"id":"c1","object":"chat.completion.chunk","created":1767225600,"model":"m1",`
		chunk(head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"priced answer"},"finish_reason":null}]}`)
		chunk(head + `"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		chunk(head + fmt.Sprintf(`"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, in, out, in+out))
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestBudgetCostThroughTheBinary: serve --provider …,price=MODEL:IN:OUT
// prices the operator's model; each llm.completed records cost_usd from
// the usage the model server reported, conv show and conv ls show the
// cost, and a --max-cost budget ends the turn that reaches it. A
// project's config cannot set prices.
func TestBudgetCostThroughTheBinary(t *testing.T) {
	model := fakeOpenAI(t, 1000, 500) // 1000 × 1 + 500 × 2 USD per million: 0.002 a call
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.node = StartNode(t, tools, rig.dataDir, "--provider", "fake=openai,base_url="+model.URL+"/v1,price=m1:1:2")

	sneaky := filepath.Join(t.TempDir(), "sneaky")
	writeProjectTree(t, sneaky, map[string]string{".jido/config.yaml": "llm: {provider: fake, model: m1, prices: {m1: {input_per_mtok: 0, output_per_mtok: 0}}}\n"})
	// The project opens (its settings are read at each call), and its
	// call fails on the member no project config has: nothing is priced
	// by a project.
	rig.run(t, "project", "open", sneaky, "--id", "sneaky")
	rig.run(t, "conv", "send", "sneaky/c1", "free please")
	es := rig.await(t, "sneaky/c1", "the call refused", func(es convEvents) bool { return len(es.of("conversation.llm.failed")) > 0 })
	if !es.has("conversation.llm.failed", "prices") || len(es.of("conversation.llm.completed")) != 0 {
		t.Fatalf("a project's prices were not refused by name:\n%s", es)
	}

	root := filepath.Join(t.TempDir(), "paid")
	writeProjectTree(t, root, map[string]string{".jido/config.yaml": "llm: {provider: fake, model: m1}\n"})
	rig.run(t, "project", "open", root, "--id", "paid")
	rig.run(t, "conv", "start", "paid", "--id", "c1", "--max-cost", "0.003")
	conv := "paid/c1"
	rig.run(t, "conv", "send", conv, "one")
	es = rig.awaitAnswer(t, conv, "priced answer")
	if !es.has("conversation.llm.completed", `"cost_usd":0.002`, `"input_tokens":1000`) {
		t.Fatalf("llm.completed does not record cost_usd 0.002:\n%s", es)
	}
	rig.run(t, "conv", "send", conv, "two")
	es = rig.await(t, conv, "the cost budget spent", func(es convEvents) bool {
		return len(es.of("conversation.budget.exceeded")) == 1
	})
	if !es.has("conversation.budget.exceeded", `"what":"cost"`, `"limit":0.003`, `"used":0.004`) {
		t.Fatalf("budget.exceeded does not say 0.004 of 0.003 USD:\n%s", es)
	}
	rig.showSays(t, conv, "status", "cost: 0.004 USD", "budget: 0.003 USD (spent: cost)")
	rig.showSays(t, conv, "diagnostics", "m1: in 2000, out 1000, 0.004 USD")
	if out := rig.run(t, "conv", "ls", "-o", "json"); !strings.Contains(out, `"cost_usd":0.004`) {
		t.Errorf("conv ls does not show the cost:\n%s", out)
	}
	rig.replayVerifies(t, conv)
}
