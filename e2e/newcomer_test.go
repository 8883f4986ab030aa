package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// TestNewcomerOwnFolder: a folder of one's own, opened without a
// .jido/config.yaml, answers the first message with one line saying how
// to give it a model, and files no dead letter of the engine's own
// events (its conversation.llm.requested with an empty provider was
// refused as invalid_event); project init then writes a starter .jido/
// the node opens with one skill, one command and nothing diagnosed; and
// log show dlq says why an input was refused (issue 21, items 4 and 10).
func TestNewcomerOwnFolder(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	work := t.TempDir()
	app := filepath.Join(work, "app")
	writeProjectTree(t, app, map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
	run := func(stdin string, args ...string) cliResult {
		t.Helper()
		return cliIn(t, work, node.URL, stdin, args...)
	}
	run("", "project", "open", "app", "--id", "app").must(t, "project open")

	chat := run("hello\n", "conv", "chat", "app")
	var says []string
	for line := range strings.SplitSeq(chat.stdout, "\n") {
		if strings.Contains(line, "model") {
			says = append(says, line)
		}
	}
	if chat.code != 0 || len(says) != 1 || !strings.Contains(says[0], "jido-bus project init "+app) || !strings.Contains(says[0], filepath.Join(app, ".jido", "config.yaml")) {
		t.Fatalf("conv chat app without a model: exit %d; want one line saying how to give it one:\n%s%s", chat.code, chat.stdout, chat.stderr)
	}
	if dlq := run("", "log", "show", "dlq"); strings.Contains(dlq.stdout, "dlq ") {
		t.Errorf("the engine dead-lettered its own events:\n%s", dlq.stdout)
	}

	init := run("", "project", "init", "app").must(t, "project init")
	if !strings.Contains(init, "next: jido-bus project open "+app+" --id app") {
		t.Errorf("project init does not say what to run next:\n%s", init)
	}
	for _, f := range []string{"config.yaml", "policy.yaml", "commands/review.md", "skills/project-notes/SKILL.md"} {
		if _, err := os.Stat(filepath.Join(app, ".jido", f)); err != nil {
			t.Errorf("project init wrote no .jido/%s: %v", f, err)
		}
	}
	// A project open already follows its files, the policy included:
	// init says so, and how to see what changed.
	if !strings.Contains(init, "project reload app") {
		t.Errorf("project init does not say how an open project takes the new files:\n%s", init)
	}
	run("", "project", "close", "app").must(t, "project close")
	run("", "project", "open", "app", "--id", "app").must(t, "project open")
	get := run("", "project", "get", "app", "-o", "json").must(t, "project get")
	var info struct {
		Counts struct {
			Skills, Commands int
		}
		Diagnostics  int
		PolicySource string `json:"policy_source"`
	}
	if err := json.Unmarshal([]byte(get), &info); err != nil || info.Counts.Skills != 1 || info.Counts.Commands != 1 || info.Diagnostics != 0 || info.PolicySource != ".jido/policy.yaml" {
		t.Errorf("the starter as the node loads it: %+v %v\n%s", info, err, get)
	}
	review := run("", "project", "call", "app", "command_review", `{"arguments":["main.go"]}`)
	if review.code != 0 || !strings.Contains(review.stdout, "main.go") {
		t.Errorf("the starter's command: exit %d\n%s%s", review.code, review.stdout, review.stderr)
	}

	node.NATS(t, "pub", "jido.agent.nosuch.counter.increment", "{}")
	testkit.Eventually(t, "the dead letter of a signal to no agent", func() bool {
		dlq := run("", "log", "show", "dlq")
		return strings.Contains(dlq.stdout, "not_found") && strings.Contains(dlq.stdout, "jido.agent.nosuch.counter.increment") &&
			strings.Contains(dlq.stdout, `no agent "nosuch"`) && strings.Contains(dlq.stdout, "REASON")
	})
}

// TestNewcomerOneNumbering: conv show --at, conv fork --at and log replay
// --to take the same position, the stream sequence conv show prints
// beside each item, with the README's own examples (issue 21, item 8:
// replay --to took an agent version, so --to 4 and --at 4 named two
// different moments).
func TestNewcomerOneNumbering(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	work := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		return cliIn(t, work, node.URL, "", args...).must(t, args...)
	}

	// The quick start: c1 incremented by 2, then 3.
	node.NATS(t, "req", "jido.api.agent.start", `{"type":"counter","id":"c1"}`)
	node.NATS(t, "req", "jido.agent.c1.counter.increment", `{"by":2}`)
	node.NATS(t, "req", "jido.agent.c1.counter.increment", `{"by":3}`)
	if out := run("log", "replay", "agent/c1", "--diff", "1", "2"); !strings.Contains(out, "~ /count: 0 -> 2") {
		t.Errorf("log replay agent/c1 --diff 1 2, from the started record to the first increment:\n%s", out)
	}
	if out := run("log", "replay", "agent/c1", "--to", "3", "--verify"); !strings.Contains(out, `"count":2`) || !strings.Contains(out, "verified") {
		t.Errorf("log replay agent/c1 --to 3 --verify:\n%s", out)
	}

	// The README's conversation driven from outside: an operator starts
	// its agent, under an id no project uses.
	run("agent", "start", "conversation", "--id", "notes/c1")
	run("conv", "send", "notes/c1", "What does main.go do?")
	node.NATS(t, "req", "jido.agent.notes/c1.conversation.tool.requested", `{"call_id":"k1","name":"read_file","args":{"path":"main.go"}}`,
		"-H", "ce-specversion:1.0", "-H", "ce-id:t1", "-H", "ce-source:assistant", "-H", "ce-causationid:u1")
	timeline := run("conv", "show", "notes/c1")
	var user, call string
	for line := range strings.SplitSeq(timeline, "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) > 1 && fields[1] == "user":
			user = fields[0]
		case len(fields) > 1 && fields[1] == "tool_call":
			call = fields[0]
		}
	}
	if user != "4" || call != "6" {
		t.Fatalf("conv show notes/c1 puts the question at %q and the tool call at %q (the README says 4 and 6):\n%s", user, call, timeline)
	}
	at := run("conv", "show", "notes/c1", "--view", "llm_context", "--at", user)
	if !strings.Contains(at, "What does main.go do?") || strings.Contains(at, "read_file") {
		t.Errorf("conv show --view llm_context --at %s, after the question and before the call:\n%s", user, at)
	}
	run("conv", "fork", "notes/c1", "--at", user, "--as", "notes/f1")
	fork := run("conv", "show", "notes/f1")
	if !strings.Contains(fork, "What does main.go do?") || strings.Contains(fork, "read_file") {
		t.Errorf("conv fork --at %s holds the history up to the question:\n%s", user, fork)
	}
	replay := run("log", "replay", "conversation/notes/c1", "--to", user, "-o", "json")
	var res struct {
		Seq   uint64 `json:"seq"`
		State struct {
			Conversation struct {
				LastEventID string `json:"last_event_id"`
			} `json:"conversation"`
		} `json:"state"`
	}
	if err := json.Unmarshal([]byte(replay), &res); err != nil || res.Seq != 4 || res.State.Conversation.LastEventID == "t1" || res.State.Conversation.LastEventID == "" {
		t.Errorf("log replay --to %s, after the question: %+v %v\n%s", user, res, err, replay)
	}
	replay = run("log", "replay", "conversation/notes/c1", "--to", call, "-o", "json")
	if err := json.Unmarshal([]byte(replay), &res); err != nil || res.State.Conversation.LastEventID != "t1" {
		t.Errorf("log replay --to %s, after the tool call: %+v %v\n%s", call, res, err, replay)
	}
}

// TestNewcomerHelp: --help through the binary says what the commands do
// (issue 21, item 11).
func TestNewcomerHelp(t *testing.T) {
	mcp := runCLI(t, nil, "mcp", "--help").must(t, "mcp --help")
	if strings.Contains(mcp, "127.0.0.1:4222") {
		t.Errorf("mcp --help names a default server it does not use:\n%s", mcp)
	}
	serve := runCLI(t, nil, "serve", "--help").must(t, "serve --help")
	for line := range strings.SplitSeq(serve, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--user ") && !strings.Contains(line, "JIDO_USER") {
			t.Errorf("serve --help: %s", line)
		}
	}
	for _, verb := range [][]string{{"log", "show"}, {"log", "verify"}, {"log", "replay"}, {"conv", "show"}, {"conv", "ls"}, {"projection", "ls"}} {
		if out := runCLI(t, nil, append(verb, "--help")...).must(t, verb...); strings.Contains(out, "created if missing") {
			t.Errorf("%s --help says its data dir is created if missing", strings.Join(verb, " "))
		}
	}
}
