package node

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/assistant"
	"github.com/jido-bus/jido-bus/projects/assistant/llm"
)

// TestAssistantRefusalSaysHowToGoOn: a model server that refuses the
// request (400) ends the turn with its reason and what to do: every call
// sends the whole history, so the message names the fork that leaves the
// turn out — the seq just before the turn's user message.
func TestAssistantRefusalSaysHowToGoOn(t *testing.T) {
	n := startQuickNode(t)
	talk(t, n, `{"fail":{"kind":"bad_request","status":400,"message":"messages[3]: a 'tool' message must follow an assistant message with tool_calls"}}
`, "", "hi")
	failed := awaitEvent(t, n, "p1/c1", conversation.LLMFailed, nil)
	user := awaitEvent(t, n, "p1/c1", conversation.UserMessage, nil)
	msg := fmt.Sprint(dataOf(t, failed)["error"])
	for _, want := range []string{
		"messages[3]: a 'tool' message must follow", // the server's reason
		fmt.Sprintf("jido-bus conv fork p1/c1 --at %d", user.Seq-1),
		"conv show p1/c1",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("llm.failed says %q; want it to say %q", msg, want)
		}
	}
	if d := dataOf(t, failed); d["retryable"] != false {
		t.Errorf("a refusal is not retried, yet llm.failed says retryable: %v", d)
	}
}

// TestAssistantLastAttemptIsNotRetryable: the attempts of a call that
// keeps failing are retryable until the last, which the loop does not
// retry and so is not labelled so (conv show said "retryable" on it).
func TestAssistantLastAttemptIsNotRetryable(t *testing.T) {
	n := startQuickNode(t)
	talk(t, n, strings.Repeat(`{"fail":{"kind":"server","status":503,"message":"overloaded"}}
`, conversation.MaxAttempts), "", "hi")
	awaitEvent(t, n, "p1/c1", conversation.LLMFailed, func(e eventlog.Entry) bool {
		return dataOf(t, e)["attempt"] == float64(conversation.MaxAttempts)
	})
	for _, e := range convEvents(t, n, "p1/c1") {
		if e.Event.Type() != conversation.LLMFailed {
			continue
		}
		d := dataOf(t, e)
		last := d["attempt"] == float64(conversation.MaxAttempts)
		if got := d["retryable"] == true; got == last {
			t.Errorf("attempt %v of %d: retryable %v; want it on every attempt but the last", d["attempt"], conversation.MaxAttempts, d["retryable"])
		}
		if last && !strings.Contains(fmt.Sprint(d["error"]), fmt.Sprintf("after %d attempts", conversation.MaxAttempts)) {
			t.Errorf("the last attempt's error %v does not say the call was given up after %d attempts", d["error"], conversation.MaxAttempts)
		}
	}
}

// modelRecorder is a model that answers from a list and keeps every request.
type modelRecorder struct {
	mu      sync.Mutex
	answers []llm.Response
	reqs    []llm.Request
}

func (r *modelRecorder) Complete(_ context.Context, req llm.Request, _ func(llm.Delta)) (llm.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	n := len(r.reqs)
	resp := llm.Response{Text: "done", StopReason: "stop"}
	if n <= len(r.answers) {
		resp = r.answers[n-1]
	}
	r.mu.Unlock()
	return resp, nil
}

// await waits for the n-th request and returns it.
func (r *modelRecorder) await(t *testing.T, n int) llm.Request {
	t.Helper()
	var req llm.Request
	testkit.Eventually(t, fmt.Sprintf("request %d of the model", n), func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.reqs) < n {
			return false
		}
		req = r.reqs[n-1]
		return true
	})
	return req
}

// startRecordingNode starts a node whose every model is rec.
func startRecordingNode(t *testing.T, rec *modelRecorder) *Node {
	t.Helper()
	n, err := Start(context.Background(), Config{
		DataDir: t.TempDir(), NATS: NATSConfig{Listen: "127.0.0.1:0"}, NoSync: true,
		Assistant: func(c *assistant.Config) {
			c.NewProvider = func(assistant.LLMSettings, string) (llm.Provider, error) { return rec, nil }
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
	return n
}

func send(t *testing.T, n *Node, conv, text string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"conv": conv, "text": text})
	if _, err := n.convSend(context.Background(), body); err != nil {
		t.Fatal(err)
	}
}

// TestAssistantMessageDuringApprovalFollowsTheResults: a user message
// sent while a tool call waits for a person joins the next request after
// the call's result — [user, assistant(tool_calls), tool, user] — and the
// turn after still works (the old order, user before tool, was refused
// 400 by OpenAI-compatible servers at every later turn).
func TestAssistantMessageDuringApprovalFollowsTheResults(t *testing.T) {
	rec := &modelRecorder{answers: []llm.Response{
		{ToolCalls: []llm.ToolCall{{ID: "w1", Name: "write_file", Args: `{"path":"b.txt","content":"new"}`}}, StopReason: "tool_calls"},
		{Text: "written, and noted", StopReason: "stop"},
		{Text: "you are welcome", StopReason: "stop"},
	}}
	n := startRecordingNode(t, rec)
	root := assistantProject(t, "", "tools:\n  \"*\": allow\n  write_file: ask\n")
	if _, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: root, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	send(t, n, "p1/c1", "write b")
	awaitEvent(t, n, "p1/c1", conversation.ToolApprovalRequested, nil)
	send(t, n, "p1/c1", "and say so")
	awaitEvent(t, n, "p1/c1", conversation.UserMessage, func(e eventlog.Entry) bool { return strings.Contains(string(e.Event.Data()), "say so") })
	approve(t, n, "p1/c1", "w1")
	second := rec.await(t, 2)
	if got := roles(second); got != "user assistant tool user" {
		t.Fatalf("second request: %s; want user assistant tool user", got)
	}
	if m := second.Messages[3]; m.Content != "and say so" {
		t.Fatalf("the last message is %q, want the message sent during the approval", m.Content)
	}
	awaitEvent(t, n, "p1/c1", conversation.AssistantMessage, func(e eventlog.Entry) bool { return strings.Contains(string(e.Event.Data()), "noted") })
	send(t, n, "p1/c1", "thanks")
	if got := roles(rec.await(t, 3)); got != "user assistant tool user assistant user" {
		t.Fatalf("third request: %s", got)
	}
}

// approve approves call id of conv as a person would.
func approve(t *testing.T, n *Node, conv, id string) {
	t.Helper()
	sig, err := agents.NewSignal(conversation.ToolApproval, map[string]any{"call_id": id, "decision": "approve", "by": "test"})
	if err != nil {
		t.Fatal(err)
	}
	sig.SetID("approval." + id + ".approve")
	sig.SetSource(conversation.Source(conv))
	sig.SetExtension(bus.ExtCausationID, id)
	if _, err := n.Runtime().Call(context.Background(), conv, sig); err != nil {
		t.Fatal(err)
	}
}

func roles(r llm.Request) string {
	var rs []string
	for _, m := range r.Messages {
		rs = append(rs, m.Role)
	}
	return strings.Join(rs, " ")
}

// TestAssistantSendsBadArgumentsBack: tool-call arguments that were not
// JSON go back to the model as it sent them, beside the result that says
// what was wrong, so it can correct itself (they were sent back as {}).
func TestAssistantSendsBadArgumentsBack(t *testing.T) {
	rec := &modelRecorder{answers: []llm.Response{
		{ToolCalls: []llm.ToolCall{{ID: "r1", Name: "read_file", Args: `{"path": "a.txt"`}}, StopReason: "tool_calls"},
	}}
	n := startRecordingNode(t, rec)
	root := assistantProject(t, "", "")
	if _, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: root, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	send(t, n, "p1/c1", "read a")
	second := rec.await(t, 2)
	if got := roles(second); got != "user assistant tool" {
		t.Fatalf("second request: %s", got)
	}
	if args := second.Messages[1].ToolCalls[0].Args; args != `{"path": "a.txt"` {
		t.Errorf("the call's arguments went back as %q, want the model's own text", args)
	}
	if res := second.Messages[2].Content; !strings.Contains(res, "invalid_args") || !strings.Contains(res, "not valid JSON") {
		t.Errorf("the call's result %q does not say what was wrong", res)
	}
}

// TestAssistantSendsTheProjectsInstructions: a project's AGENTS.md and
// .jido/instructions.md are the system message of every call, before the
// conversation's own system prompt, without --system; the files are named
// in conversation.llm.requested; an edit reaches the next call.
func TestAssistantSendsTheProjectsInstructions(t *testing.T) {
	rec := &modelRecorder{}
	n := startRecordingNode(t, rec)
	root := assistantProject(t, "", "")
	if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("Run make test before you say done.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".jido", "instructions.md"), []byte("Answer in French.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: root, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	send(t, n, "p1/c1", "hi")
	if got, want := rec.await(t, 1).System, "Run make test before you say done.\n\nAnswer in French."; got != want {
		t.Fatalf("system message %q, want %q", got, want)
	}
	req := awaitEvent(t, n, "p1/c1", conversation.LLMRequested, nil)
	if got := fmt.Sprint(dataOf(t, req)["instructions"]); got != "[AGENTS.md .jido/instructions.md]" {
		t.Errorf("conversation.llm.requested names the instructions %s", got)
	}

	if _, err := n.Conversations().Start(context.Background(), convapi.StartRequest{Project: "p1", Conversation: "c2", System: "Be brief."}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, ".jido", "instructions.md")); err != nil {
		t.Fatal(err)
	}
	send(t, n, "p1/c2", "hi")
	if got, want := rec.await(t, 2).System, "Run make test before you say done.\n\nBe brief."; got != want {
		t.Fatalf("system message %q, want %q", got, want)
	}
}

// TestAssistantSendsConfiguredInstructionFiles: the files instructions:
// in .jido/config.yaml names join the system message after AGENTS.md and
// before .jido/instructions.md, and llm.requested names them; a named
// file that does not exist, or that the policy's path rules keep from
// the tools (a .env), fails the call with a config error saying which,
// and nothing of it reaches the model.
func TestAssistantSendsConfiguredInstructionFiles(t *testing.T) {
	rec := &modelRecorder{}
	n := startRecordingNode(t, rec)
	root := assistantProject(t, "", "paths:\n  deny: [\"**/.env\"]\n")
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("AGENTS.md", "Run make test.\n")
	write("CLAUDE.md", "Use tabs.\n")
	write("docs/style.md", "Short names.\n")
	write(".jido/instructions.md", "Answer in French.\n")
	write(".env", "TOKEN=secret\n")
	config, err := os.ReadFile(filepath.Join(root, ".jido", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	setInstructions := func(list string) {
		t.Helper()
		write(".jido/config.yaml", string(config)+"instructions: "+list+"\n")
	}
	setInstructions("[CLAUDE.md, ./docs/style.md, AGENTS.md]")
	if _, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: root, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	send(t, n, "p1/c1", "hi")
	if got, want := rec.await(t, 1).System, "Run make test.\n\nUse tabs.\n\nShort names.\n\nAnswer in French."; got != want {
		t.Fatalf("system message %q, want %q", got, want)
	}
	req := awaitEvent(t, n, "p1/c1", conversation.LLMRequested, nil)
	if got := fmt.Sprint(dataOf(t, req)["instructions"]); got != "[AGENTS.md CLAUDE.md docs/style.md .jido/instructions.md]" {
		t.Errorf("conversation.llm.requested names the instructions %s", got)
	}

	for conv, c := range map[string]struct{ list, want string }{
		"p1/c2": {"[NOTES.md]", "NOTES.md"},
		"p1/c3": {"[.env]", ".env"},
		"p1/c4": {"[/etc/passwd]", "/etc/passwd"},
		"p1/c5": {"[../outside.md]", "outside.md"},
		"p1/c6": {"[docs]", "docs"},
		"p1/c7": {"[a, b, c, d, e, f, g, h, i]", "at most 8"},
	} {
		setInstructions(c.list)
		send(t, n, conv, "hi")
		failed := awaitEvent(t, n, conv, conversation.LLMFailed, nil)
		if msg := fmt.Sprint(dataOf(t, failed)["error"]); !strings.Contains(msg, c.want) {
			t.Errorf("instructions: %s: llm.failed %s, want it to name %s", c.list, msg, c.want)
		}
	}
	rec.mu.Lock()
	calls := len(rec.reqs)
	rec.mu.Unlock()
	if n := calls; n != 1 {
		t.Errorf("the model was called %d times, want once: a refused instructions file stops the call", n)
	}
}
