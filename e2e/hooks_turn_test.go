package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// turnHookScript writes a.txt, then answers "Done." with its usage.
var turnHookScript = []string{
	`{"text":"Writing.","tool_calls":[{"id":"w1","name":"write_file","args":{"path":"a.txt","content":"one"}}]}`,
	`{"text":"Done.","usage":{"input_tokens":11,"output_tokens":3},"repeat":true}`,
}

// TestHookTurnsThroughTheBinary: a project that hooks turn.start and
// turn.end. The NATS CLI denies a turn: it ends hook_denied with the
// hook's reason before any model call (no conversation.llm.requested,
// nothing written). A Go service allows the next turn, once for the whole
// turn (its tool call and second model call are not asked again), sees
// the user's message, and is told the final answer and its usage at
// turn.end; its deny there is recorded and changes nothing. A local
// command hook decides turn.start too. Every conversation replays
// --verify without asking a hook.
func TestHookTurnsThroughTheBinary(t *testing.T) {
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.restart(t)
	root := rig.newAssistantProject(t, "th", "", turnHookScript, nil)
	writeProjectTree(t, root, map[string]string{".jido/config.yaml": "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\n" +
		"hooks: {events: [turn.start, turn.end], timeout_ms: 1500, default: deny}\n"})
	const start, end = "jido.hook.th.turn.start", "jido.hook.th.turn.end"

	// The NATS CLI denies the turn.
	served, wait := rig.node.StartNATS(t, "reply", start, `{"decision":"deny","reason":"no work on Fridays","by":"team-rules"}`, "--count", "1")
	testkit.Eventually(t, "nats reply listening", func() bool { return strings.Contains(served.String(), "Listening") })
	conv := rig.startConv(t, "th", "denied")
	rig.run(t, "conv", "send", conv, "write a.txt")
	es := rig.await(t, conv, "the turn's end", func(es convEvents) bool { return len(es.of("conversation.llm.failed")) > 0 })
	_ = wait() // the CLI exits 1 once --count is reached
	if !es.has("conversation.hook.decided", `"hook":"turn.start"`, `"turn":"`, `"decision":"deny"`, `"by":"team-rules"`, `"via":"`+start+`"`) ||
		!es.has("conversation.llm.failed", `"type":"hook_denied"`, "a hook denied the turn before the model was asked: no work on Fridays") {
		t.Fatalf("the CLI's deny:\n%s", es)
	}
	if n := len(es.of("conversation.llm.requested")); n != 0 {
		t.Fatalf("a denied turn asked the model %d times:\n%s", n, es)
	}
	if _, err := os.Stat(filepath.Join(root, "a.txt")); err == nil {
		t.Fatal("a.txt was written in a turn the hook denied")
	}
	rig.showSays(t, conv, "timeline", "no work on Fridays")
	rig.replayVerifies(t, conv)

	// A Go service allows the turn and is told its end.
	nc, err := nats.Connect(rig.node.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var starts, ends atomic.Int32
	var mu sync.Mutex
	var told struct {
		Turn, Message string
		Answer        struct {
			Text  string
			Step  int
			Usage struct {
				InputTokens  int64 `json:"input_tokens"`
				OutputTokens int64 `json:"output_tokens"`
			}
		}
	}
	var startTurn string
	if _, err := nc.QueueSubscribe(start, "team-rules", func(m *nats.Msg) {
		starts.Add(1)
		var req struct{ Event, Turn, Message string }
		if json.Unmarshal(m.Data, &req) != nil || req.Event != "turn.start" || req.Message != "write a.txt" {
			_ = m.Respond([]byte(`{"decision":"deny","reason":"unexpected request: ` + strings.ReplaceAll(string(m.Data), `"`, `'`) + `"}`))
			return
		}
		mu.Lock()
		startTurn = req.Turn
		mu.Unlock()
		_ = m.Respond([]byte(`{"decision":"allow","by":"go-rules"}`))
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.QueueSubscribe(end, "team-rules", func(m *nats.Msg) {
		ends.Add(1)
		mu.Lock()
		err := json.Unmarshal(m.Data, &told)
		mu.Unlock()
		if err != nil {
			t.Errorf("turn.end request: %v", err)
		}
		_ = m.Respond([]byte(`{"decision":"deny","reason":"unreviewed","by":"go-rules"}`))
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	conv = rig.startConv(t, "th", "allowed")
	rig.run(t, "conv", "send", conv, "write a.txt")
	es = rig.await(t, conv, "turn.end's decision", func(es convEvents) bool {
		return es.has("conversation.hook.decided", `"hook":"turn.end"`)
	})
	if !es.has("conversation.hook.decided", `"hook":"turn.start"`, `"decision":"allow"`, `"by":"go-rules"`) ||
		!es.has("conversation.hook.decided", `"hook":"turn.end"`, `"decision":"deny"`, `"reason":"unreviewed"`) ||
		!es.has("conversation.assistant.message", `"text":"Done."`) || len(es.call("conversation.tool.completed", "w1")) != 1 {
		t.Fatalf("the allowed turn:\n%s", es)
	}
	if s, e := starts.Load(), ends.Load(); s != 1 || e != 1 {
		t.Fatalf("turn.start asked %d times, turn.end %d, want once each for a turn of two model calls and a tool call", s, e)
	}
	mu.Lock()
	if told.Turn == "" || told.Turn != startTurn || told.Answer.Text != "Done." || told.Answer.Step != 2 ||
		told.Answer.Usage.InputTokens != 11 || told.Answer.Usage.OutputTokens != 3 {
		t.Errorf("turn.end was told %+v (turn.start's turn %q), want the final answer, its step and usage", told, startTurn)
	}
	mu.Unlock()
	if b, err := os.ReadFile(filepath.Join(root, "a.txt")); err != nil || string(b) != "one" {
		t.Fatalf("a.txt: %q %v", b, err)
	}
	rig.replayVerifies(t, conv)
	nc.Close()

	// A local command hook decides turn.start.
	hook := `case "$(cat)" in *secret*) echo "secrets stay out of chats" >&2; exit 2;; esac; echo '{"decision":"allow","by":"local-rules"}'`
	line, _ := json.Marshal([]string{"sh", "-c", hook})
	writeProjectTree(t, root, map[string]string{
		".jido/policy.yaml": "commands:\n  programs: [sh]\n",
		".jido/config.yaml": "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\nhooks: {events: [turn.start], command: " + string(line) + "}\n"})
	rig.run(t, "project", "reload", "th")
	conv = rig.startConv(t, "th", "local")
	rig.run(t, "conv", "send", conv, "the secret is 42")
	rig.await(t, conv, "the denied turn", func(es convEvents) bool { return len(es.of("conversation.llm.failed")) > 0 })
	rig.run(t, "conv", "send", conv, "write a.txt")
	es = rig.awaitAnswer(t, conv, "Done.")
	if !es.has("conversation.hook.decided", `"hook":"turn.start"`, `"decision":"deny"`, `"reason":"secrets stay out of chats"`) ||
		!es.has("conversation.llm.failed", `"type":"hook_denied"`, "secrets stay out of chats") ||
		!es.has("conversation.hook.decided", `"hook":"turn.start"`, `"decision":"allow"`, `"by":"local-rules"`) {
		t.Fatalf("the local command hook:\n%s", es)
	}
	rig.replayVerifies(t, conv)
}

// TestHookRewriteTooLargeThroughTheBinary: a tool.before hook that
// rewrites a call's arguments into more than an event may hold (a node
// run with --max-data-bytes 65536) cannot have its decision logged; the
// call fails hook_rewrite_too_large, neither arguments run, and the turn
// goes on to the model's answer instead of waiting for ever.
func TestHookRewriteTooLargeThroughTheBinary(t *testing.T) {
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.node = StartNode(t, tools, rig.dataDir, "--max-data-bytes", "65536")
	root := rig.newAssistantProject(t, "big", "", hookScript, nil)
	writeProjectTree(t, root, map[string]string{".jido/config.yaml": "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\n" +
		"hooks: {events: [tool.before], timeout_ms: 1500}\n"})
	nc, err := nats.Connect(rig.node.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	huge := strings.Repeat("x", 100<<10)
	if _, err := nc.Subscribe("jido.hook.big.tool.before", func(m *nats.Msg) {
		reply, _ := json.Marshal(map[string]any{"decision": "allow", "args": map[string]any{"path": "a.txt", "content": huge}, "by": "padder"})
		_ = m.Respond(reply)
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	conv := rig.startConv(t, "big", "c1")
	rig.run(t, "conv", "send", conv, "write a.txt")
	es := rig.awaitAnswer(t, conv, "Done.")
	if !es.has("conversation.tool.failed", `"type":"hook_rewrite_too_large"`, "padder", "over the") ||
		len(es.call("conversation.tool.started", "w1")) != 0 || len(es.of("conversation.hook.decided")) != 0 {
		t.Fatalf("a rewrite too large for the log:\n%s", es)
	}
	if _, err := os.Stat(filepath.Join(root, "a.txt")); err == nil {
		t.Fatal("a.txt was written though the hook's decision was never recorded")
	}
	rig.replayVerifies(t, conv)
}
