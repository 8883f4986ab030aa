package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// hookScript is a model that writes a.txt, then says it is done.
var hookScript = []string{
	`{"text":"Writing.","tool_calls":[{"id":"w1","name":"write_file","args":{"path":"a.txt","content":"one"}}]}`,
	`{"text":"Done.","repeat":true}`,
}

// hookedTurn starts conversation id of project, sends it a message and
// waits for w1's outcome.
func (r *assistantRig) hookedTurn(t *testing.T, project, id string) convEvents {
	t.Helper()
	conv := r.startConv(t, project, id)
	r.run(t, "conv", "send", conv, "write a.txt")
	return r.await(t, conv, "w1's outcome", func(es convEvents) bool {
		return len(es.call("conversation.tool.failed", "w1"))+len(es.call("conversation.tool.completed", "w1")) == 1
	})
}

// TestHooksOnTheBusThroughTheBinary: a project that hooks tool.before
// asks the bus before each tool call. The NATS CLI as the hook denies:
// the call fails hook_denied with its reason, nothing written. A Go
// service in a queue group of two rewrites the arguments: the call runs
// with the hook's, and a rewrite the tool's schema or the sandbox refuses
// is refused as any call would be. No responder, and a responder that
// never answers, get the project's default (deny), stated in the event.
// Every decision is conversation.hook.decided, and log replay --verify
// re-decides every conversation without asking a hook.
func TestHooksOnTheBusThroughTheBinary(t *testing.T) {
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.restart(t)
	root := rig.newAssistantProject(t, "hk", "", hookScript, nil)
	writeProjectTree(t, root, map[string]string{".jido/config.yaml": "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\n" +
		"hooks: {events: [tool.before], timeout_ms: 1500, default: deny}\n"})
	const subject = "jido.hook.hk.tool.before"

	// The NATS CLI denies.
	served, wait := rig.node.StartNATS(t, "reply", subject, `{"decision":"deny","reason":"no writes here"}`, "--count", "1")
	testkit.Eventually(t, "nats reply listening", func() bool { return strings.Contains(served.String(), "Listening") })
	es := rig.hookedTurn(t, "hk", "deny")
	_ = wait() // the CLI exits 1 once --count is reached, after draining
	if !strings.Contains(served.String(), `Received on subject "`+subject+`"`) {
		t.Fatalf("the CLI was not asked:\n%s", served.String())
	}
	if !es.has("conversation.hook.decided", `"decision":"deny"`, `"reason":"no writes here"`, `"via":"`+subject+`"`) ||
		!es.has("conversation.tool.failed", `"type":"hook_denied"`, "no writes here") || len(es.call("conversation.tool.started", "w1")) != 0 {
		t.Fatalf("the CLI's deny:\n%s", es)
	}
	if _, err := os.Stat(filepath.Join(root, "a.txt")); err == nil {
		t.Fatal("a.txt was written though the hook denied it")
	}

	// A Go service, two replicas in a queue group, rewrites the path.
	nc, err := nats.Connect(rig.node.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var rewriteTo atomic.Pointer[any]
	var asked atomic.Int32
	for range 2 {
		sub, err := nc.QueueSubscribe(subject, "team-rules", func(m *nats.Msg) {
			asked.Add(1)
			var req struct {
				Conversation string         `json:"conversation"`
				Tool         string         `json:"tool"`
				Args         map[string]any `json:"args"`
			}
			if json.Unmarshal(m.Data, &req) != nil || req.Tool != "write_file" || req.Args["path"] != "a.txt" || !strings.HasPrefix(req.Conversation, "hk/") {
				_ = m.Respond([]byte(`{"decision":"deny","reason":"the request lacks the call: ` + strings.ReplaceAll(string(m.Data), `"`, `'`) + `"}`))
				return
			}
			req.Args["path"] = *rewriteTo.Load()
			reply, _ := json.Marshal(map[string]any{"decision": "allow", "args": req.Args, "by": "go-rewriter"})
			_ = m.Respond(reply)
		})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// Each value is stored afresh: the replicas read it on their own
	// goroutines.
	rewrite := func(v any) { rewriteTo.Store(&v) }
	rewrite("b.txt")
	es = rig.hookedTurn(t, "hk", "rewrite")
	if !es.has("conversation.hook.decided", `"decision":"allow"`, `"args":{"content":"one","path":"b.txt"}`, `"by":"go-rewriter"`) ||
		len(es.call("conversation.tool.completed", "w1")) != 1 {
		t.Fatalf("the rewrite:\n%s", es)
	}
	if b, err := os.ReadFile(filepath.Join(root, "b.txt")); err != nil || string(b) != "one" {
		t.Fatalf("b.txt: %q %v, want the rewritten call's file", b, err)
	}
	if _, err := os.Stat(filepath.Join(root, "a.txt")); err == nil {
		t.Fatal("a.txt was written: the model's arguments ran, not the hook's")
	}
	rewrite(7) // not a string: the tool's input schema refuses it
	es = rig.hookedTurn(t, "hk", "invalid")
	if !es.has("conversation.tool.failed", `"type":"invalid_args"`, "at /path: got number") {
		t.Fatalf("a rewrite into invalid arguments:\n%s", es)
	}
	rewrite("../escape.txt") // outside the root: the sandbox refuses it
	es = rig.hookedTurn(t, "hk", "escape")
	if len(es.call("conversation.tool.completed", "w1")) != 0 || !es.has("conversation.tool.failed", "outside") {
		t.Fatalf("a rewrite out of the project:\n%s", es)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(root), "escape.txt")); err == nil {
		t.Fatal("a hook's rewrite wrote outside the project")
	}
	if n := asked.Load(); n != 3 {
		t.Errorf("the queue group was asked %d times, want 3 (once per call, by one replica)", n)
	}

	// A responder that never answers: the timeout, then the default.
	nc.Close()
	silent, err := nats.Connect(rig.node.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	if _, err := silent.Subscribe(subject, func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := silent.Flush(); err != nil {
		t.Fatal(err)
	}
	es = rig.hookedTurn(t, "hk", "timeout")
	if !es.has("conversation.hook.decided", `"decision":"deny"`, `"defaulted":true`, "within hooks.timeout_ms") ||
		!es.has("conversation.tool.failed", `"type":"hook_denied"`) {
		t.Fatalf("a hook that never answers:\n%s", es)
	}
	silent.Close()

	// No responder at all: the default at once, stated.
	es = rig.hookedTurn(t, "hk", "none")
	if !es.has("conversation.hook.decided", `"decision":"deny"`, `"defaulted":true`, "no hook service subscribes to "+subject) {
		t.Fatalf("no responder:\n%s", es)
	}

	for _, c := range []string{"deny", "rewrite", "invalid", "escape", "timeout", "none"} {
		rig.replayVerifies(t, "hk/"+c)
	}
}

// TestHooksLocalCommandThroughTheBinary: a project without a NATS
// service hooks tool.before with a program run under its sandbox as
// run_command runs one: given the request on stdin, it allows one call
// (its stdout's JSON) and denies the other (non-zero exit, its stderr's
// first line the reason). A hook program the policy's commands do not
// list is refused as run_command would refuse it, and the default
// decides, stated.
func TestHooksLocalCommandThroughTheBinary(t *testing.T) {
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.restart(t)
	hook := `case "$(cat)" in *secret.txt*) echo "secret.txt is off limits" >&2; echo more >&2; exit 3;; esac; echo '{"decision":"allow","by":"local-rules"}'`
	cfg := func(program string) string {
		line, _ := json.Marshal([]string{program, "-c", hook})
		return "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\n" +
			"hooks: {events: [tool.before], command: " + string(line) + "}\n"
	}
	root := rig.newAssistantProject(t, "lc", "commands:\n  programs: [sh]\n", []string{
		`{"text":"Writing.","tool_calls":[{"id":"s1","name":"write_file","args":{"path":"secret.txt","content":"x"}},{"id":"o1","name":"write_file","args":{"path":"ok.txt","content":"y"}}]}`,
		`{"text":"Done.","repeat":true}`,
	}, nil)
	writeProjectTree(t, root, map[string]string{".jido/config.yaml": cfg("sh")})
	conv := rig.startConv(t, "lc", "c1")
	rig.run(t, "conv", "send", conv, "write both")
	es := rig.awaitAnswer(t, conv, "Done.")
	if !es.has("conversation.hook.decided", `"call_id":"s1"`, `"decision":"deny"`, `"reason":"secret.txt is off limits"`) ||
		!es.has("conversation.tool.failed", `"type":"hook_denied"`, "secret.txt is off limits") {
		t.Fatalf("the command's deny:\n%s", es)
	}
	if !es.has("conversation.hook.decided", `"call_id":"o1"`, `"decision":"allow"`, `"by":"local-rules"`) || len(es.call("conversation.tool.completed", "o1")) != 1 {
		t.Fatalf("the command's allow:\n%s", es)
	}
	if _, err := os.Stat(filepath.Join(root, "secret.txt")); err == nil {
		t.Fatal("secret.txt was written though the hook denied it")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "ok.txt")); string(b) != "y" {
		t.Fatalf("ok.txt: %q", b)
	}
	rig.replayVerifies(t, conv)

	// bash is not on the policy's commands.programs.
	writeProjectTree(t, root, map[string]string{".jido/config.yaml": cfg("bash")})
	conv = rig.startConv(t, "lc", "c2")
	rig.run(t, "conv", "send", conv, "write both")
	es = rig.awaitAnswer(t, conv, "Done.")
	if !es.has("conversation.hook.decided", `"call_id":"o1"`, `"decision":"deny"`, `"defaulted":true`, "refuses the hook command bash") ||
		len(es.of("conversation.tool.started")) != 0 {
		t.Fatalf("a hook program the policy does not list:\n%s", es)
	}
	rig.replayVerifies(t, conv)

	// A hook program inside the project, where the model may write, is
	// refused even when the policy lists it: the guarded would rewrite
	// its guard.
	prog := filepath.Join(root, "tools", "hook")
	writeProjectTree(t, root, map[string]string{"tools/hook": "#!/bin/sh\necho '{\"decision\":\"allow\"}'\n",
		".jido/policy.yaml": "commands:\n  programs: [sh, " + prog + "]\n",
		".jido/config.yaml": "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\nhooks: {events: [tool.before], command: [" + prog + "]}\n"})
	if err := os.Chmod(prog, 0o755); err != nil {
		t.Fatal(err)
	}
	rig.run(t, "project", "reload", "lc")
	conv = rig.startConv(t, "lc", "c3")
	rig.run(t, "conv", "send", conv, "write both")
	es = rig.awaitAnswer(t, conv, "Done.")
	if !es.has("conversation.hook.decided", `"call_id":"o1"`, `"decision":"deny"`, `"defaulted":true`, "inside the project, where the model may rewrite it") {
		t.Fatalf("a hook program the model could rewrite:\n%s", es)
	}
}
