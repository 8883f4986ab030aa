package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRewindThroughTheBinary: the scripted model edits a file and
// creates another over two turns; conv rewind --dry-run lists what it
// would put back and changes nothing; conv rewind to the end of the first
// turn puts the edited file back, removes the created one, keeps the
// first turn's file and forks the conversation there, the fork going on
// where the parent was. In the fork, a file changed outside the
// conversation stops a rewind (changed_outside, nothing done) until
// --force. log replay --verify passes on the parent and both forks, and
// stopping every conversation leaves no checkpoint behind.
func TestRewindThroughTheBinary(t *testing.T) {
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.restart(t)
	root := rig.newAssistantProject(t, "rw", "", []string{
		`{"text":"Keeping.","tool_calls":[{"id":"k1","name":"write_file","args":{"path":"keep.txt","content":"v1"}}]}`,
		`{"text":"Turn one done."}`,
		`{"text":"Editing.","tool_calls":[{"id":"e1","name":"edit_file","args":{"path":"notes.txt","old_string":"hello","new_string":"bye"}},{"id":"w1","name":"write_file","args":{"path":"sub/new.txt","content":"created"}}]}`,
		`{"text":"Turn two done."}`,
	}, map[string]string{"notes.txt": "hello\n"})
	file := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, p))
		if os.IsNotExist(err) {
			return "<none>"
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	conv := rig.startConv(t, "rw", "c1")
	rig.run(t, "conv", "send", conv, "keep something")
	at := turnEnd(rig.await(t, conv, "the end of turn one", turnEnded(1)))
	rig.run(t, "conv", "send", conv, "now edit")
	es := rig.await(t, conv, "the end of turn two", turnEnded(2))
	if !es.has("conversation.tool.completed", `"e1"`, `"files"`, `"path":"notes.txt"`, `"before":"sha256:`) ||
		!es.has("conversation.tool.completed", `"w1"`, `"path":"sub/new.txt"`) || es.has("conversation.tool.completed", `"w1"`, `"before"`) {
		t.Fatalf("the tool outcomes do not say which files they changed and from what:\n%s", es)
	}
	if file("notes.txt") != "bye\n" || file("sub/new.txt") != "created" {
		t.Fatalf("the model's edits did not happen: %q %q", file("notes.txt"), file("sub/new.txt"))
	}
	to := "--to=" + seqArg(at)

	out := rig.run(t, "conv", "rewind", conv, to, "--dry-run")
	for _, want := range []string{"would put back notes.txt: restore", "would put back sub/new.txt: remove", "dry run: nothing done"} {
		if !strings.Contains(out, want) {
			t.Fatalf("conv rewind --dry-run does not say %q:\n%s", want, out)
		}
	}
	if file("notes.txt") != "bye\n" || file("sub/new.txt") != "created" {
		t.Fatal("a dry run changed the files")
	}

	out = rig.run(t, "conv", "rewind", conv, to, "--as", "rw/back", "-o", "json")
	var reply struct {
		Fork  string `json:"fork"`
		Files []struct {
			Path   string `json:"path"`
			Action string `json:"action"`
			Done   bool   `json:"done"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &reply); err != nil || reply.Fork != "rw/back" || len(reply.Files) != 2 || !reply.Files[0].Done || !reply.Files[1].Done {
		t.Fatalf("conv rewind: %v\n%s", err, out)
	}
	if file("notes.txt") != "hello\n" || file("sub/new.txt") != "<none>" || file("keep.txt") != "v1" {
		t.Fatalf("after the rewind: notes.txt %q, sub/new.txt %q, keep.txt %q; want hello, none, v1", file("notes.txt"), file("sub/new.txt"), file("keep.txt"))
	}
	// The parent is as it was; the fork goes on from the step.
	if got := rig.events(t, conv); got[len(got)-1].Seq != es[len(es)-1].Seq {
		t.Fatalf("the parent changed: it ended at seq %d before the rewind, now:\n%s", es[len(es)-1].Seq, got)
	}
	// The scripted model answers by the conversation's turn: the fork's
	// next turn is the parent's second again, made anew.
	rig.run(t, "conv", "send", "rw/back", "try again")
	fork := rig.await(t, "rw/back", "the end of its turn two", turnEnded(2))
	if !fork.has("conversation.user.message", "try again") || fork.has("conversation.user.message", "now edit") ||
		file("notes.txt") != "bye\n" || file("sub/new.txt") != "created" {
		t.Fatalf("the fork did not go on from the step (notes.txt %q, sub/new.txt %q):\n%s", file("notes.txt"), file("sub/new.txt"), fork)
	}
	forkAt := turnEnd(rig.await(t, "rw/back", "the end of its turn one", turnEnded(1)))

	// Changed outside the conversation: named, nothing done, until --force.
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := tryRun("conv", "rewind", "rw/back", "--to="+seqArg(forkAt), "--as", "rw/back2", "--nats-url", rig.node.URL)
	if err == nil || !strings.Contains(stderr, "changed_outside") || !strings.Contains(stderr, "notes.txt") || !strings.Contains(stderr, "--force") {
		t.Fatalf("a rewind over an outside change: %v\n%s", err, stderr)
	}
	if file("notes.txt") != "outside\n" {
		t.Fatalf("a refused rewind changed notes.txt: %q", file("notes.txt"))
	}
	if _, stderr, err := tryRun("conv", "show", "rw/back2", "--nats-url", rig.node.URL); err == nil {
		t.Fatalf("a refused rewind forked:\n%s", stderr)
	}
	out = rig.run(t, "conv", "rewind", "rw/back", "--to="+seqArg(forkAt), "--as", "rw/back2", "--force")
	if !strings.Contains(out, "changed outside the conversation") || !strings.Contains(out, "forked into rw/back2") || file("notes.txt") != "hello\n" || file("sub/new.txt") != "<none>" {
		t.Fatalf("conv rewind --force: notes.txt %q, sub/new.txt %q\n%s", file("notes.txt"), file("sub/new.txt"), out)
	}

	for _, c := range []string{conv, "rw/back", "rw/back2"} {
		rig.replayVerifies(t, c)
	}

	// Stopping a conversation drops what it kept; what a fork holds too
	// stays (notes.txt's "hello", which rw/back kept as well).
	cps := filepath.Join(rig.dataDir, "checkpoints")
	if _, err := os.Stat(filepath.Join(cps, "convs", "rw%2Fc1.json")); err != nil {
		t.Fatalf("rw/c1 kept no checkpoint: %v", err)
	}
	if out := rig.node.NATS(t, "req", "jido.api.conv.stop", `{"project":"rw","conversation":"c1"}`); strings.Contains(out, `"error"`) {
		t.Fatalf("conv.stop rw/c1: %s", out)
	}
	if _, err := os.Stat(filepath.Join(cps, "convs", "rw%2Fc1.json")); !os.IsNotExist(err) {
		t.Fatalf("rw/c1's checkpoints after it stopped: %v, want none", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(cps, "objects")); len(ents) != 1 {
		t.Fatalf("%d contents left after rw/c1 stopped, want rw/back's one: %v", len(ents), ents)
	}
}

func seqArg(seq uint64) string { return strconv.FormatUint(seq, 10) }

// turnEnded holds once n turns ended: n llm.completed that stopped (no
// tool call left), each a turn's last event. A rewind to a turn's end
// forks after it; one to its assistant message, whose llm.completed
// follows, forks with that LLM call unfinished, and the fork asks the
// model again.
func turnEnded(n int) func(convEvents) bool {
	return func(es convEvents) bool {
		return len(stopped(es)) >= n
	}
}

func stopped(es convEvents) convEvents {
	var out convEvents
	for _, e := range es.of("conversation.llm.completed") {
		if strings.Contains(string(e.Event.Data), `"stop_reason":"stop"`) {
			out = append(out, e)
		}
	}
	return out
}

// turnEnd is the seq of the first turn's end in es.
func turnEnd(es convEvents) uint64 { return stopped(es)[0].Seq }
