package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// convEntry is one entry of a conversation's stream as `log show -o json`
// prints it.
type convEntry struct {
	Seq   uint64 `json:"seq"`
	Event struct {
		ID          string          `json:"id"`
		Type        string          `json:"type"`
		CausationID string          `json:"causationid"`
		Data        json.RawMessage `json:"data"`
	} `json:"event"`
}

// convEvents is the conversation events of a stream, in order.
type convEvents []convEntry

// of returns the entries of event type typ.
func (es convEvents) of(typ string) convEvents {
	var out convEvents
	for _, e := range es {
		if e.Event.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// call returns the entries of type typ about tool call id.
func (es convEvents) call(typ, id string) convEvents {
	var out convEvents
	for _, e := range es.of(typ) {
		var d struct {
			CallID string `json:"call_id"`
		}
		if json.Unmarshal(e.Event.Data, &d) == nil && d.CallID == id {
			out = append(out, e)
		}
	}
	return out
}

// has reports whether some entry of type typ has data holding every one of
// want (substrings of its JSON).
func (es convEvents) has(typ string, want ...string) bool {
	for _, e := range es.of(typ) {
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(string(e.Event.Data), w)
		}
		if ok {
			return true
		}
	}
	return false
}

func (es convEvents) String() string {
	var b strings.Builder
	for _, e := range es {
		if strings.HasPrefix(e.Event.Type, "jido.agent.") {
			continue
		}
		fmt.Fprintf(&b, "%4d %-40s %-45s %s\n", e.Seq, e.Event.Type, e.Event.ID, e.Event.Data)
	}
	return b.String()
}

// assistantRig is one node and the CLI pointed at it; restart replaces the
// node on the same data dir.
type assistantRig struct {
	t       *testing.T
	dataDir string
	node    *Node
}

func (r *assistantRig) run(t *testing.T, args ...string) string {
	t.Helper()
	return tools.Run(t, append(args, "--nats-url", r.node.URL)...)
}

func (r *assistantRig) restart(t *testing.T) {
	t.Helper()
	r.node = StartNode(r.t, tools, r.dataDir)
}

// events reads conv's whole stream.
func (r *assistantRig) events(t *testing.T, conv string) convEvents {
	t.Helper()
	return logEntries(t, r.run(t, "log", "show", "conversation/"+conv, "--limit", "0", "-o", "json"))
}

// logEntries decodes what log show -o json printed.
func logEntries(t *testing.T, out string) convEvents {
	t.Helper()
	var page struct {
		Entries convEvents `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil {
		t.Fatalf("log show: %v\n%s", err, out)
	}
	return page.Entries
}

// await polls conv's stream until cond holds, and returns it.
func (r *assistantRig) await(t *testing.T, conv, what string, cond func(convEvents) bool) convEvents {
	t.Helper()
	var es convEvents
	testkit.EventuallyNil(t, conv+": "+what, func() error {
		if es = r.events(t, conv); !cond(es) {
			return fmt.Errorf("the log holds:\n%s", es)
		}
		return nil
	})
	return es
}

// awaitAnswer waits for the assistant message whose text is text, the end
// of a turn, and fails at once if the turn ends another way.
func (r *assistantRig) awaitAnswer(t *testing.T, conv, text string) convEvents {
	t.Helper()
	want, _ := json.Marshal(text)
	return r.await(t, conv, "the answer "+string(want), func(es convEvents) bool {
		return es.has("conversation.assistant.message", `"text":`+string(want))
	})
}

// newAssistantProject writes a project folder with the scripted model
// playing script (one JSON object per line), files and, when policy is not
// empty, .jido/policy.yaml; opens it as id and returns its root.
func (r *assistantRig) newAssistantProject(t *testing.T, id, policy string, script []string, files map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), id)
	tree := map[string]string{
		".jido/config.yaml":  "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\n",
		".jido/script.jsonl": strings.Join(script, "\n") + "\n",
	}
	if policy != "" {
		tree[".jido/policy.yaml"] = policy
	}
	for k, v := range files {
		tree[k] = v
	}
	writeProjectTree(t, root, tree)
	r.run(t, "project", "open", root, "--id", id)
	return root
}

// startConv starts conversation id of project and returns "project/id".
func (r *assistantRig) startConv(t *testing.T, project, id string) string {
	t.Helper()
	r.run(t, "conv", "start", project, "--id", id)
	return project + "/" + id
}

// TestAssistant drives the assistant through the real binary on the
// scripted provider: tools that edit the project, a path escape refused
// and shown to the model, approvals, kill -9 during a tool, a stream and a
// pending approval, and a replay of every conversation that decides again
// what the log recorded.
func TestAssistant(t *testing.T) {
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.restart(t)
	var convs []string // every conversation, for the replay at the end

	t.Run("read_edit_escape", func(t *testing.T) {
		outside := t.TempDir()
		writeProjectTree(t, outside, map[string]string{"secret.txt": "TOP SECRET\n"})
		root := rig.newAssistantProject(t, "edit", "", []string{
			`{"text":"Let me read it.","tool_calls":[{"id":"r1","name":"read_file","args":{"path":"notes.txt"}}],"usage":{"input_tokens":11,"output_tokens":7}}`,
			`{"text":"Now the edit.","tool_calls":[{"id":"e1","name":"edit_file","args":{"path":"notes.txt","old_string":"old","new_string":"new"}}],"usage":{"input_tokens":21,"output_tokens":8}}`,
			`{"text":"And the files next door.","tool_calls":[{"id":"x1","name":"read_file","args":{"path":"../outside.txt"}},{"id":"x2","name":"read_file","args":{"path":"escape/secret.txt"}}],"usage":{"input_tokens":31,"output_tokens":9}}`,
			`{"text":"Edited notes.txt; the other files are out of my reach.","usage":{"input_tokens":41,"output_tokens":10}}`,
		}, map[string]string{"notes.txt": "the old text\n"})
		writeProjectTree(t, filepath.Dir(root), map[string]string{"outside.txt": "NEXT DOOR\n"})
		if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
			t.Fatal(err)
		}
		conv := rig.startConv(t, "edit", "c1")
		convs = append(convs, conv)
		rig.run(t, "conv", "send", conv, "fix the notes")
		es := rig.awaitAnswer(t, conv, "Edited notes.txt; the other files are out of my reach.")

		if b, err := os.ReadFile(filepath.Join(root, "notes.txt")); err != nil || string(b) != "the new text\n" {
			t.Errorf("notes.txt after the turn: %q %v, want the edit", b, err)
		}
		if !es.has("conversation.tool.completed", `"call_id":"r1"`, "the old text") ||
			len(es.call("conversation.tool.completed", "e1")) != 1 {
			t.Errorf("read_file r1 and edit_file e1 did not both complete:\n%s", es)
		}
		for _, id := range []string{"x1", "x2"} {
			f := es.call("conversation.tool.failed", id)
			if len(f) != 1 || !strings.Contains(string(f[0].Event.Data), "outside_root") {
				t.Errorf("the escape %s is not one conversation.tool.failed outside_root:\n%s", id, es)
			}
			if len(es.call("conversation.tool.completed", id)) != 0 {
				t.Errorf("the escape %s completed:\n%s", id, es)
			}
		}
		all := fmt.Sprint(es)
		for _, secret := range []string{"TOP SECRET", "NEXT DOOR"} {
			if strings.Contains(all, secret) {
				t.Errorf("the log holds %q from outside the root:\n%s", secret, all)
			}
		}
		// The turn went on after the refusals: a fourth LLM call answered.
		if n := len(es.of("conversation.llm.completed")); n != 4 {
			t.Errorf("%d llm.completed, want 4 (the turn must go on after the refusals):\n%s", n, es)
		}
		for _, c := range es.of("conversation.llm.completed") {
			var d struct {
				Usage struct {
					InputTokens  int `json:"input_tokens"`
					OutputTokens int `json:"output_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(c.Event.Data, &d); err != nil || d.Usage.InputTokens == 0 || d.Usage.OutputTokens == 0 {
				t.Errorf("llm.completed at seq %d carries no usage: %s", c.Seq, c.Event.Data)
			}
		}

		// The timeline shows both calls and their results.
		tl := rig.run(t, "conv", "show", conv)
		for _, want := range []string{"r1 read_file", "e1 edit_file", "x1 read_file", "completed", "the old text", "outside_root"} {
			if !strings.Contains(tl, want) {
				t.Errorf("the timeline shows no %q:\n%s", want, tl)
			}
		}
		// The model's context holds the refusal.
		if ctx := rig.run(t, "conv", "show", conv, "--view", "llm_context", "-o", "json"); !strings.Contains(ctx, "outside_root") {
			t.Errorf("the llm_context does not tell the model of the refusal:\n%s", ctx)
		}
	})

	// The contract: conversation.llm.requested names the model (and the
	// provider), so diagnostics show what each attempt asked.
	t.Run("llm_requested_names_model", func(t *testing.T) {
		es := rig.events(t, "edit/c1")
		req := es.of("conversation.llm.requested")
		if len(req) == 0 {
			t.Fatalf("no llm.requested:\n%s", es)
		}
		for _, e := range req {
			if !strings.Contains(string(e.Event.Data), `"model":"demo"`) || !strings.Contains(string(e.Event.Data), `"provider":"scripted"`) {
				t.Errorf("llm.requested %s does not name the model demo and the provider scripted of .jido/config.yaml: %s", e.Event.ID, e.Event.Data)
			}
		}
	})

	t.Run("approve_and_deny", func(t *testing.T) {
		root := rig.newAssistantProject(t, "ask", "tools: {\"*\": allow, write_file: ask}\n", []string{
			`{"text":"Writing a.txt.","tool_calls":[{"id":"w1","name":"write_file","args":{"path":"a.txt","content":"AAA\n"}}]}`,
			`{"text":"a.txt is written."}`,
			`{"text":"Writing b.txt.","tool_calls":[{"id":"w2","name":"write_file","args":{"path":"b.txt","content":"BBB\n"}}]}`,
			`{"text":"You said no; b.txt is left alone."}`,
		}, nil)
		conv := rig.startConv(t, "ask", "c1")
		convs = append(convs, conv)
		rig.run(t, "conv", "send", conv, "write a")
		es := rig.await(t, conv, "the approval request of w1", func(es convEvents) bool {
			return len(es.call("conversation.tool.approval.requested", "w1")) == 1
		})
		if len(es.call("conversation.tool.started", "w1")) != 0 {
			t.Errorf("w1 started before its approval:\n%s", es)
		}
		if _, err := os.Stat(filepath.Join(root, "a.txt")); !os.IsNotExist(err) {
			t.Errorf("a.txt exists before the approval: %v", err)
		}
		if st := rig.run(t, "conv", "show", conv, "--view", "status", "-o", "json"); !strings.Contains(st, "awaiting_approval") {
			t.Errorf("the status does not say awaiting_approval:\n%s", st)
		}
		rig.run(t, "conv", "approve", conv, "w1")
		es = rig.awaitAnswer(t, conv, "a.txt is written.")
		if b, err := os.ReadFile(filepath.Join(root, "a.txt")); err != nil || string(b) != "AAA\n" {
			t.Errorf("a.txt after the approval: %q %v", b, err)
		}
		if !es.has("conversation.tool.approval", `"call_id":"w1"`, `"decision":"approve"`) || len(es.call("conversation.tool.completed", "w1")) != 1 {
			t.Errorf("w1 not approved then completed:\n%s", es)
		}
		// A second answer to a settled call is refused and runs nothing.
		if code, stderr := runErr(t, "conv", "approve", conv, "w1", "--nats-url", rig.node.URL); code != 3 || !strings.Contains(stderr, "not awaiting approval") {
			t.Errorf("conv approve of the done w1: exit %d\n%s", code, stderr)
		}

		rig.run(t, "conv", "send", conv, "write b")
		rig.await(t, conv, "the approval request of w2", func(es convEvents) bool {
			return len(es.call("conversation.tool.approval.requested", "w2")) == 1
		})
		rig.run(t, "conv", "deny", conv, "w2", "--reason", "not now")
		es = rig.awaitAnswer(t, conv, "You said no; b.txt is left alone.")
		if f := es.call("conversation.tool.failed", "w2"); len(f) != 1 || !strings.Contains(string(f[0].Event.Data), "denied") {
			t.Errorf("the denied w2 is not one conversation.tool.failed denied:\n%s", es)
		}
		if len(es.call("conversation.tool.started", "w2")) != 0 {
			t.Errorf("the denied w2 started:\n%s", es)
		}
		if _, err := os.Stat(filepath.Join(root, "b.txt")); !os.IsNotExist(err) {
			t.Errorf("b.txt exists after the deny: %v", err)
		}
		if ctx := rig.run(t, "conv", "show", conv, "--view", "llm_context", "-o", "json"); !strings.Contains(ctx, "denied") {
			t.Errorf("the llm_context does not tell the model of the deny:\n%s", ctx)
		}
	})

	// kill -9 with three conversations in flight: one waiting for an
	// approval, one running a slow command, one streaming an answer.
	pendRoot := rig.newAssistantProject(t, "pend", "tools: {\"*\": allow, write_file: ask}\n", []string{
		`{"text":"Writing p.txt.","tool_calls":[{"id":"p1","name":"write_file","args":{"path":"p.txt","content":"PPP\n"}}]}`,
		`{"text":"p.txt is written."}`,
	}, nil)
	pend := rig.startConv(t, "pend", "c1")
	// late's approvals time out after lateTimeout: the timer must survive
	// the restart too, or the call waits for ever. Its approval is asked
	// for last before the kill, which comes a moment later: lateTimeout is
	// that moment many times over, however busy the machine.
	const lateTimeout = 15 * time.Second
	lateRoot := rig.newAssistantProject(t, "late", "tools: {\"*\": allow, write_file: ask}\n", []string{
		`{"text":"Writing l.txt.","tool_calls":[{"id":"l1","name":"write_file","args":{"path":"l.txt","content":"LLL\n"}}]}`,
		`{"text":"Nobody answered; l.txt is not written."}`,
	}, map[string]string{".jido/config.yaml": fmt.Sprintf("llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\napproval_timeout_ms: %d\n", lateTimeout.Milliseconds())})
	late := rig.startConv(t, "late", "c1")
	// slowArg is 30 seconds, spelled so that no other process has it.
	slowArg := fmt.Sprintf("30.%05d", os.Getpid()%100000)
	rig.newAssistantProject(t, "slow", "commands: {programs: [sleep]}\n", []string{
		`{"text":"Sleeping.","tool_calls":[{"id":"s1","name":"run_command","args":{"argv":["sleep","` + slowArg + `"]}}]}`,
		`{"text":"The sleep was interrupted; I will not run it again."}`,
	}, nil)
	slow := rig.startConv(t, "slow", "c1")
	const long = "This answer streams one byte at a time."
	rig.newAssistantProject(t, "stream", "", []string{
		`{"text":"` + long + `","chunk":1,"delay_ms":100}`,
	}, nil)
	stream := rig.startConv(t, "stream", "c1")
	convs = append(convs, pend, late, slow, stream)

	rig.run(t, "conv", "send", pend, "write p")
	rig.await(t, pend, "the approval request of p1", func(es convEvents) bool {
		return len(es.call("conversation.tool.approval.requested", "p1")) == 1
	})
	rig.run(t, "conv", "send", slow, "sleep")
	rig.await(t, slow, "s1 started", func(es convEvents) bool {
		return len(es.call("conversation.tool.started", "s1")) == 1
	})
	rig.run(t, "conv", "send", late, "write l")
	rig.await(t, late, "the approval request of l1", func(es convEvents) bool {
		return len(es.call("conversation.tool.approval.requested", "l1")) == 1
	})
	deltas, deltasDone := rig.node.StartNATS(t, "sub", "jido.emit."+stream+".conversation.assistant.delta", "--count", "3")
	testkit.Eventually(t, "the delta subscription", func() bool { return strings.Contains(deltas.String(), "Subscribing") })
	rig.run(t, "conv", "send", stream, "talk slowly")
	if err := deltasDone(); err != nil {
		t.Fatalf("no deltas streamed: %v\n%s", err, deltas.String())
	}
	if got := deltas.String(); strings.Contains(got, "Jido-Seq") || !strings.Contains(got, "conversation.assistant.delta") {
		t.Errorf("the deltas are not published unsequenced on the emit subject:\n%s", got)
	}
	es := rig.events(t, stream)
	if len(es.of("conversation.llm.requested")) != 1 || len(es.of("conversation.assistant.message")) != 0 {
		t.Fatalf("the stream is not in flight at the kill:\n%s", es)
	}
	rig.node.Kill(t)
	// What late's stream held at the kill, read from the dead node's data
	// dir: exactly what crossed the restart.
	lateBefore := logEntries(t, tools.Run(t, "log", "show", "conversation/"+late, "--limit", "0", "-o", "json", "--data-dir", rig.dataDir))
	rig.restart(t)

	t.Run("kill_during_tool", func(t *testing.T) {
		es := rig.awaitAnswer(t, slow, "The sleep was interrupted; I will not run it again.")
		if f := es.call("conversation.tool.failed", "s1"); len(f) != 1 || !strings.Contains(string(f[0].Event.Data), "interrupted") {
			t.Errorf("s1 is not one conversation.tool.failed interrupted:\n%s", es)
		}
		if n := len(es.call("conversation.tool.started", "s1")); n != 1 {
			t.Errorf("s1 started %d times, want once (never re-run):\n%s", n, es)
		}
		if n := len(es.of("conversation.llm.requested")); n != 2 {
			t.Errorf("%d llm.requested, want 2 (the call after the interruption):\n%s", n, es)
		}
		if ctx := rig.run(t, "conv", "show", slow, "--view", "llm_context", "-o", "json"); !strings.Contains(ctx, "interrupted") {
			t.Errorf("the llm_context does not tell the model of the interruption:\n%s", ctx)
		}
	})

	// The call the log calls interrupted must not go on running: its
	// effects would land after the model was told it did not finish.
	t.Run("kill_during_tool_stops_it", func(t *testing.T) {
		if _, err := os.Stat("/proc/self/cmdline"); err != nil {
			t.Skip("no /proc to look for the command in")
		}
		// Whatever still runs when the wait fails is killed: ours alone,
		// no other process has slowArg.
		defer killAll("sleep\x00" + slowArg + "\x00")
		testkit.EventuallyNil(t, "the run_command of s1, recorded interrupted, to end with the node's kill -9", func() error {
			if pids := processesWith("sleep\x00" + slowArg + "\x00"); len(pids) > 0 {
				return fmt.Errorf("`sleep %s` (pids %v) still runs after the restart", slowArg, pids)
			}
			return nil
		})
	})

	t.Run("kill_during_stream", func(t *testing.T) {
		es := rig.awaitAnswer(t, stream, long)
		if f := es.of("conversation.llm.failed"); len(f) != 1 || !strings.Contains(string(f[0].Event.Data), "interrupted") {
			t.Errorf("the interrupted attempt is not one llm.failed interrupted:\n%s", es)
		}
		if !es.has("conversation.llm.requested", `"attempt":2`) {
			t.Errorf("no second attempt:\n%s", es)
		}
		if n := len(es.of("conversation.assistant.message")); n != 1 {
			t.Errorf("%d assistant messages, want exactly 1:\n%s", n, es)
		}
		if n := len(es.of("conversation.llm.completed")); n != 1 {
			t.Errorf("%d llm.completed, want 1:\n%s", n, es)
		}
	})

	t.Run("kill_during_approval", func(t *testing.T) {
		if st := rig.run(t, "conv", "show", pend, "--view", "status", "-o", "json"); !strings.Contains(st, "awaiting_approval") || !strings.Contains(st, "p1") {
			t.Errorf("after the restart the status does not say p1 awaits approval:\n%s", st)
		}
		es := rig.events(t, pend)
		if len(es.call("conversation.tool.failed", "p1")) != 0 || len(es.call("conversation.tool.started", "p1")) != 0 {
			t.Errorf("the pending p1 was failed or run by the restart:\n%s", es)
		}
		if _, err := os.Stat(filepath.Join(pendRoot, "p.txt")); !os.IsNotExist(err) {
			t.Errorf("p.txt exists before the approval: %v", err)
		}
		rig.run(t, "conv", "approve", pend, "p1")
		es = rig.awaitAnswer(t, pend, "p.txt is written.")
		if b, err := os.ReadFile(filepath.Join(pendRoot, "p.txt")); err != nil || string(b) != "PPP\n" {
			t.Errorf("p.txt after the approval: %q %v", b, err)
		}
		if n := len(es.call("conversation.tool.approval.requested", "p1")); n != 1 {
			t.Errorf("%d approval requests of p1, want 1:\n%s", n, es)
		}
		if code, stderr := runErr(t, "conv", "deny", pend, "p1", "--nats-url", rig.node.URL); code != 3 || !strings.Contains(stderr, "not awaiting approval") {
			t.Errorf("conv deny of the approved p1: exit %d\n%s", code, stderr)
		}
		if n := len(rig.events(t, pend).call("conversation.tool.started", "p1")); n != 1 {
			t.Errorf("p1 started %d times, want once", n)
		}
	})

	t.Run("approval_timeout_across_kill", func(t *testing.T) {
		if len(lateBefore.call("conversation.tool.approval.requested", "l1")) != 1 || len(lateBefore.call("conversation.tool.approval", "l1")) != 0 {
			t.Fatalf("l1 was not awaiting its approval at the kill (its timeout is %s, the kill came a moment after its request):\n%s", lateTimeout, lateBefore)
		}
		es := rig.awaitAnswer(t, late, "Nobody answered; l.txt is not written.")
		if !es.has("conversation.tool.approval", `"call_id":"l1"`, `"decision":"deny"`, `"reason":"timeout"`) {
			t.Errorf("no automatic deny of l1 with reason timeout:\n%s", es)
		}
		if f := es.call("conversation.tool.failed", "l1"); len(f) != 1 || !strings.Contains(string(f[0].Event.Data), "denied") {
			t.Errorf("l1 is not one conversation.tool.failed denied:\n%s", es)
		}
		if _, err := os.Stat(filepath.Join(lateRoot, "l.txt")); !os.IsNotExist(err) {
			t.Errorf("l.txt exists after the timeout: %v", err)
		}
	})

	t.Run("replay_verify", func(t *testing.T) {
		for _, conv := range convs {
			out, stderr, err := tryRun("log", "replay", "conversation/"+conv, "--verify", "--nats-url", rig.node.URL)
			if err != nil || !strings.Contains(out, "verified") || strings.Contains(out+stderr, "diverge") {
				t.Errorf("log replay conversation/%s --verify: %v\n%s%s", conv, err, out, stderr)
			}
		}
	})
}

// processesWith returns the pids whose /proc/PID/cmdline (arguments
// separated and ended by NUL) holds args.
func processesWith(args string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(b), args) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// killAll kills every process whose command line holds args; args must
// be the test's own (a random argument no other process has).
func killAll(args string) {
	for _, pid := range processesWith(args) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
