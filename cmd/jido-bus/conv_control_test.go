package main

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/bus"
)

// TestConvStartCancelApproveThroughANode: conv start prints the new
// conversation's CONV; conv cancel appends conversation.cancel; conv
// approve and deny of a call that waits for nothing exit 3 saying so;
// bad arguments are refused before anything is sent.
func TestConvStartCancelApproveThroughANode(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	url := []string{"--nats-url", n.URL()}
	run := func(args ...string) (string, error) { return runRoot(t, append(args, url...)...) }
	parent := t.TempDir()
	writeTree(t, parent, map[string]string{"proj/main.go": "package main\n"})
	if out, err := run("project", "open", filepath.Join(parent, "proj"), "--id", "p1"); err != nil {
		t.Fatalf("open: %v\n%s", err, out)
	}

	out, err := run("conv", "start", "p1", "--id", "c1")
	if err != nil || out != "p1/c1\n" {
		t.Fatalf("conv start: %v\n%q", err, out)
	}
	out, err = run("conv", "start", "p1", "-o", "json")
	var info struct{ ID, Project string }
	if err != nil || json.Unmarshal([]byte(out), &info) != nil || info.Project != "p1" || !strings.HasPrefix(info.ID, "p1/") {
		t.Fatalf("conv start -o json: %v\n%s", err, out)
	}
	out, err = run("conv", "cancel", "p1/c1", "--reason", "enough", "-o", "json")
	var reply convControlReply
	if err != nil || json.Unmarshal([]byte(out), &reply) != nil || reply.Conv != "p1/c1" || reply.Version == 0 {
		t.Fatalf("conv cancel: %v\n%s", err, out)
	}
	out, err = run("log", "show", "conversation/p1/c1")
	if err != nil || !strings.Contains(out, "conversation.cancel") {
		t.Fatalf("log show after cancel: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"conv", "start", "nosuch"}, exitNotFound, "nosuch"},
		{[]string{"conv", "start", "p1/c2"}, exitFailed, "--id"},
		{[]string{"conv", "cancel", "p1/none"}, exitNotFound, "not running"},
		{[]string{"conv", "cancel", "nokey"}, exitFailed, "nokey"},
		{[]string{"conv", "approve", "p1/c1", "k1"}, exitNotFound, "not awaiting approval"},
		{[]string{"conv", "deny", "p1/c1", "k1", "--reason", "no"}, exitNotFound, "not awaiting approval"},
		{[]string{"conv", "deny", "p1/c1", "k1", "--remember"}, exitFailed, "remember"},
	} {
		out, err := run(tc.args...)
		if err == nil || exitCode(err) != tc.code || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: %v (exit %d), want exit %d saying %q\n%s", tc.args, err, exitCode(err), tc.code, tc.says, out)
		}
	}
}

// TestConvStartBody: the llm, system and budget members are sent only when given
// (a node that does not know them yet refuses unknown members).
func TestConvStartBody(t *testing.T) {
	var o convStartOptions
	b, _ := json.Marshal(o.body("p1"))
	if string(b) != `{"project":"p1"}` {
		t.Fatalf("plain body %s", b)
	}
	o.llm.Model, o.llm.Provider, o.system = "m", "openai", "be brief"
	b, _ = json.Marshal(o.body("p1"))
	if string(b) != `{"project":"p1","llm":{"provider":"openai","model":"m"},"system":"be brief"}` {
		t.Fatalf("body %s", b)
	}
	o.budget.MaxTokens, o.budget.MaxCostUSD = 1000, 0.5
	b, _ = json.Marshal(o.body("p1"))
	if string(b) != `{"project":"p1","llm":{"provider":"openai","model":"m"},"system":"be brief","budget":{"max_tokens":1000,"max_cost_usd":0.5}}` {
		t.Fatalf("body with a budget %s", b)
	}
	// NaN and Inf never reach the encoder, whose error names no flag.
	for _, usd := range []float64{math.NaN(), math.Inf(1)} {
		body := convStartBody{Project: "p1", Budget: &convBudget{MaxCostUSD: usd}}
		if _, err := startConversation(context.Background(), nil, bus.Subjects{}, body); err == nil || !strings.Contains(err.Error(), "budget.max_cost_usd") {
			t.Errorf("--max-cost %v: %v, want refused naming budget.max_cost_usd", usd, err)
		}
	}
	o = convStartOptions{mode: "plan"}
	if b, _ = json.Marshal(o.body("p1")); string(b) != `{"project":"p1","mode":"plan"}` {
		t.Fatalf("body with --mode plan %s", b)
	}
	// A mode the node would refuse is refused before anything is sent.
	if _, err := startConversation(context.Background(), nil, bus.Subjects{}, convStartBody{Project: "p1", Mode: "readonly"}); err == nil || !strings.Contains(err.Error(), "--mode") {
		t.Errorf("--mode readonly: %v, want refused naming --mode", err)
	}
}

// TestChatKey: chat's CONV is an id of PROJECT or PROJECT/<id>.
func TestChatKey(t *testing.T) {
	for _, tc := range []struct{ project, conv, want string }{
		{"p1", "c1", "p1/c1"},
		{"p1", "p1/c1", "p1/c1"},
		{"p1", "p2/c1", ""},
		{"p1", "bad id", ""},
	} {
		got, err := chatKey(tc.project, tc.conv)
		if got != tc.want && (tc.want != "" || err == nil) {
			t.Errorf("chatKey(%s, %s) = %q, %v; want %q", tc.project, tc.conv, got, err, tc.want)
		}
	}
}
