package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitIn runs git in dir as the test's operator and fails the test on an
// error.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWorktreesThroughTheBinary: two conversations started with
// --worktree in a git project write the same path with different content
// through the scripted model; each reads the checkout's version first
// (neither sees the other's), the checkout is untouched, conv ls and conv
// show name each branch, a command of one sees neither the checkout's
// files nor the other worktree and cannot write the repository's .git;
// conv stop keeps a worktree, refuses to remove one with changes not
// committed, removes a committed one keeping its branch (it has a commit
// HEAD lacks) and removes a clean one with its branch; log replay
// --verify re-decides both. A project that is not a git repository,
// asked for worktrees by flag or by its config, refuses the start.
func TestWorktreesThroughTheBinary(t *testing.T) {
	rig := &assistantRig{t: t, dataDir: t.TempDir()}
	rig.restart(t)
	wtBase := rig.dataDir + "-worktrees"
	script := []string{
		`{"text":"Reading.","tool_calls":[{"id":"r1","name":"read_file","args":{"path":"notes.txt"}}]}`,
		`{"text":"Writing.","tool_calls":[{"id":"w1","name":"write_file","args":{"path":"notes.txt","content":"first\n"}}]}`,
		`{"text":"Done."}`,
		`{"text":"Again.","tool_calls":[{"id":"w2","name":"write_file","args":{"path":"notes.txt","content":"second\n"}}]}`,
		`{"text":"Done again."}`,
		`{"text":"Looking.","tool_calls":[{"id":"x1","name":"run_command","args":{"argv":["cat","CHECKOUT/notes.txt","OTHER/notes.txt"]}}]}`,
		`{"text":"Committing.","tool_calls":[{"id":"x2","name":"run_command","args":{"argv":["git","-c","user.name=m","-c","user.email=m@example.com","commit","-qam","model"]}}]}`,
		`{"text":"Status.","tool_calls":[{"id":"x3","name":"run_command","args":{"argv":["git","status","--short"]}}]}`,
		`{"text":"Looked."}`,
	}
	root := filepath.Join(t.TempDir(), "wt")
	for i, l := range script {
		l = strings.ReplaceAll(l, "CHECKOUT", root)
		script[i] = strings.ReplaceAll(l, "OTHER", filepath.Join(wtBase, "wt", "one"))
	}
	writeProjectTree(t, root, map[string]string{
		".jido/config.yaml":  "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\n",
		".jido/script.jsonl": strings.Join(script, "\n") + "\n",
		".jido/policy.yaml":  "commands:\n  programs: [cat, git]\n",
		"notes.txt":          "original\n",
	})
	gitIn(t, root, "init", "-q")
	gitIn(t, root, "add", "-A")
	gitIn(t, root, "commit", "-qm", "start")
	rig.run(t, "project", "open", root, "--id", "wt")

	rig.run(t, "conv", "start", "wt", "--id", "one", "--worktree")
	rig.run(t, "conv", "start", "wt", "--id", "two", "--worktree")
	rig.run(t, "conv", "send", "wt/one", "write it")
	one := rig.awaitAnswer(t, "wt/one", "Done.")
	rig.run(t, "conv", "send", "wt/two", "write it")
	twoFirst := rig.awaitAnswer(t, "wt/two", "Done.")
	rig.run(t, "conv", "send", "wt/two", "write it again")
	two := rig.awaitAnswer(t, "wt/two", "Done again.")
	for conv, es := range map[string]convEvents{"wt/one": one, "wt/two": two} {
		if !es.has("conversation.tool.completed", `"call_id":"r1"`, `"content":"original\n"`) {
			t.Fatalf("%s did not read the checkout's version of notes.txt first (it saw another conversation's):\n%s", conv, es)
		}
	}
	oneDir, twoDir := filepath.Join(wtBase, "wt", "one"), filepath.Join(wtBase, "wt", "two")
	if got := readText(t, filepath.Join(oneDir, "notes.txt")); got != "first\n" {
		t.Errorf("wt/one's notes.txt = %q, want its own first write", got)
	}
	if got := readText(t, filepath.Join(twoDir, "notes.txt")); got != "second\n" {
		t.Errorf("wt/two's notes.txt = %q, want its own second write", got)
	}
	if got := readText(t, filepath.Join(root, "notes.txt")); got != "original\n" {
		t.Errorf("the checkout's notes.txt = %q: a worktree conversation wrote into the checkout", got)
	}
	if st := gitIn(t, root, "status", "--porcelain"); st != "" {
		t.Errorf("the checkout changed:\n%s", st)
	}

	var ls struct {
		Conversations []struct {
			Conv   string `json:"conv"`
			Branch string `json:"branch"`
		} `json:"conversations"`
	}
	out := rig.run(t, "conv", "ls", "--project", "wt", "-o", "json")
	if err := json.Unmarshal([]byte(out), &ls); err != nil || len(ls.Conversations) != 2 {
		t.Fatalf("conv ls -o json: %v\n%s", err, out)
	}
	for _, c := range ls.Conversations {
		if want := "jido/" + strings.TrimPrefix(c.Conv, "wt/"); c.Branch != want {
			t.Errorf("conv ls: %s on branch %q, want %q", c.Conv, c.Branch, want)
		}
	}
	if table := rig.run(t, "conv", "ls", "--project", "wt"); !strings.Contains(table, "BRANCH") || !strings.Contains(table, "jido/two") {
		t.Errorf("conv ls table has no branch:\n%s", table)
	}
	rig.showSays(t, "wt/two", "status", "worktree: "+twoDir+", branch jido/two")
	if branches := gitIn(t, root, "branch", "--list", "jido/*"); !strings.Contains(branches, "jido/one") || !strings.Contains(branches, "jido/two") {
		t.Fatalf("branches: %s", branches)
	}

	// A rewind of a worktree conversation compares and puts back files
	// in its worktree, never in the checkout.
	rig.run(t, "conv", "rewind", "wt/two", "--to="+seqArg(turnEnd(twoFirst)), "--as", "wt/back")
	if got := readText(t, filepath.Join(twoDir, "notes.txt")); got != "first\n" {
		t.Errorf("after conv rewind of wt/two to its first turn, its worktree's notes.txt = %q, want %q", got, "first\n")
	}
	if got := readText(t, filepath.Join(root, "notes.txt")); got != "original\n" {
		t.Errorf("conv rewind of a worktree conversation wrote into the checkout: notes.txt = %q", got)
	}

	// After a restart, from the log alone, a command of wt/two runs in
	// its worktree: the checkout's files and the other worktree are not
	// there, the repository is read-only, and git still reads it (and
	// finds wt/two's change, which the checkout does not have).
	rig.node.Kill(t)
	rig.restart(t)
	rig.run(t, "conv", "send", "wt/two", "look around")
	es := rig.awaitAnswer(t, "wt/two", "Looked.")
	if !es.has("conversation.tool.completed", `"call_id":"x1"`, `No such file or directory`) || es.has("conversation.tool.completed", `"call_id":"x1"`, `first`) || es.has("conversation.tool.completed", `"call_id":"x1"`, `original`) {
		t.Errorf("a command of wt/two read the checkout's or wt/one's notes.txt:\n%s", es.call("conversation.tool.completed", "x1"))
	}
	if !es.has("conversation.tool.completed", `"call_id":"x2"`, `Read-only file system`) {
		t.Errorf("git commit from wt/two's command was not refused by a read-only .git:\n%s", es.call("conversation.tool.completed", "x2"))
	}
	if !es.has("conversation.tool.completed", `"call_id":"x3"`, `"exit_code":0`, `M notes.txt`) {
		t.Errorf("git status in wt/two's worktree:\n%s", es.call("conversation.tool.completed", "x3"))
	}
	if log := gitIn(t, root, "log", "--all", "--oneline"); strings.Contains(log, "model") {
		t.Fatalf("a conversation committed to the repository:\n%s", log)
	}

	rig.replayVerifies(t, "wt/one")
	rig.replayVerifies(t, "wt/two")

	// Closing: keep, a refused removal, a removal keeping its branch.
	if out := rig.run(t, "conv", "stop", "wt/two", "--keep-worktree"); !strings.Contains(out, "worktree "+twoDir+" kept; branch jido/two kept") {
		t.Errorf("conv stop --keep-worktree said:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(twoDir, "notes.txt")); err != nil {
		t.Errorf("the kept worktree: %v", err)
	}
	out = rig.run(t, "conv", "stop", "wt/one", "--remove-worktree")
	if !strings.Contains(out, "kept: ") || !strings.Contains(out, "modified or untracked files") {
		t.Errorf("conv stop --remove-worktree of a worktree with changes not committed said:\n%s", out)
	}
	gitIn(t, oneDir, "commit", "-qam", "the model's work")
	out = rig.run(t, "conv", "stop", "wt/one", "--remove-worktree", "-o", "json")
	var stop struct {
		Worktree struct {
			Removed    bool `json:"removed"`
			BranchKept bool `json:"branch_kept"`
			Commits    int  `json:"commits"`
		} `json:"worktree"`
	}
	if err := json.Unmarshal([]byte(out), &stop); err != nil || !stop.Worktree.Removed || !stop.Worktree.BranchKept || stop.Worktree.Commits != 1 {
		t.Fatalf("conv stop --remove-worktree after a commit: %v\n%s", err, out)
	}
	if _, err := os.Stat(oneDir); !os.IsNotExist(err) {
		t.Errorf("wt/one's worktree is still there: %v", err)
	}
	if branches := gitIn(t, root, "branch", "--list", "jido/one"); !strings.Contains(branches, "jido/one") {
		t.Errorf("the branch with a commit of its own was deleted")
	}

	// A clean worktree goes with its branch.
	rig.run(t, "conv", "start", "wt", "--id", "three", "--worktree")
	if out := rig.run(t, "conv", "stop", "wt/three", "--remove-worktree"); !strings.Contains(out, "removed; branch jido/three deleted") {
		t.Errorf("conv stop --remove-worktree of a clean worktree said:\n%s", out)
	}

	// Not a git repository: refused, by flag and by config.
	plain := rig.newAssistantProject(t, "plain", "", []string{`{"text":"hi"}`}, nil)
	_, stderr, err := tryRun("conv", "start", "plain", "--id", "x", "--worktree", "--nats-url", rig.node.URL)
	if err == nil || !strings.Contains(stderr, "not_git") || !strings.Contains(stderr, "is not a git repository") {
		t.Fatalf("conv start --worktree in a folder without git: %v\n%s", err, stderr)
	}
	writeProjectTree(t, plain, map[string]string{".jido/config.yaml": "llm: {provider: scripted, model: demo, script: .jido/script.jsonl}\nworktree: true\n"})
	_, stderr, err = tryRun("conv", "start", "plain", "--id", "y", "--nats-url", rig.node.URL)
	if err == nil || !strings.Contains(stderr, "not_git") || !strings.Contains(stderr, "says worktree: true") {
		t.Fatalf("conv start in a folder without git whose config says worktree: true: %v\n%s", err, stderr)
	}
}
