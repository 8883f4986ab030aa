package e2e

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// The CLI audit of the issue "Operators": what a user of the NATS CLI
// expects of jido-bus, tried through the binary.

// TestCLIAuditVersionJSONAlias: --json is the alias of -o json on every
// command that prints data, version included.
func TestCLIAuditVersionJSONAlias(t *testing.T) {
	want := runCLI(t, nil, "version", "-o", "json").must(t, "version -o json")
	got := runCLI(t, nil, "version", "--json").must(t, "version --json")
	if got != want {
		t.Errorf("version --json printed\n%s\nwant what -o json prints\n%s", got, want)
	}
	if r := runCLI(t, nil, "version", "-o", "yaml"); r.code != 1 || !strings.Contains(r.stderr, "want table or json") {
		t.Errorf("version -o yaml: exit %d, stderr %q; want 1 and the formats there are", r.code, r.stderr)
	}
}

// TestCLIAuditAuthFailureNamesTheURLsUser: credentials in NATS_URL
// (nats://user:pass@host) that the node refuses are named as what was
// presented, and the password is never printed.
func TestCLIAuditAuthFailureNamesTheURLsUser(t *testing.T) {
	n := StartNode(t, tools, t.TempDir(), "--user", "admin", "--password", "s3cret-pw")
	host := strings.TrimPrefix(n.URL, "nats://")
	runCLI(t, []string{"NATS_URL=nats://admin:s3cret-pw@" + host}, "agent", "list").must(t, "agent list with the URL's user")

	r := runCLI(t, []string{"NATS_URL=nats://admin:wrong-pw@" + host}, "agent", "list")
	if r.code != 5 || !strings.Contains(r.stderr, "authorization failed") {
		t.Fatalf("wrong password in NATS_URL: exit %d, stderr %q; want 5 and authorization failed", r.code, r.stderr)
	}
	if strings.Contains(r.stderr+r.stdout, "wrong-pw") {
		t.Errorf("the password is printed:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "no credentials") || !strings.Contains(r.stderr, "user admin (from the URL in NATS_URL)") {
		t.Errorf("the failure does not name the user the URL presented:\n%s", r.stderr)
	}
	r = runCLI(t, nil, "agent", "list", "-s", "nats://some-token@"+host)
	if r.code != 5 || strings.Contains(r.stderr, "some-token") || !strings.Contains(r.stderr, "a token (from the URL in --server)") {
		t.Errorf("a token in -s: exit %d, stderr %q; want 5, the token hidden and named as from the URL", r.code, r.stderr)
	}
}

// TestCLIAuditConvDenyNamesItself: an error of conv deny says conv deny,
// not conv approve.
func TestCLIAuditConvDenyNamesItself(t *testing.T) {
	n := StartNode(t, tools, t.TempDir())
	r := runCLI(t, []string{"NATS_URL=" + n.URL}, "conv", "deny", "p/c1", "call1")
	if r.code != 3 || !strings.Contains(r.stderr, "conv deny p/c1") {
		t.Errorf("conv deny of a call not waiting: exit %d, stderr %q; want 3 naming conv deny", r.code, r.stderr)
	}
}

// TestCLIAuditDryRunChangesNothing: agent stop of a parent and log
// truncate with --dry-run say what they would do and do nothing, and
// without a terminal and without --yes they are refused.
func TestCLIAuditDryRunChangesNothing(t *testing.T) {
	n := StartNode(t, tools, t.TempDir())
	env := []string{"NATS_URL=" + n.URL}
	root := t.TempDir()
	writeProjectTree(t, root, map[string]string{"README.md": "hi\n"})
	runCLI(t, env, "project", "open", root, "--id", "p1").must(t, "project open")
	runCLI(t, env, "conv", "start", "p1", "--id", "c1").must(t, "conv start")
	runCLI(t, env, "agent", "start", "counter", "--id", "k1").must(t, "agent start")
	for range 3 {
		runCLI(t, env, "agent", "call", "k1", "counter.increment", `{"by":1}`).must(t, "agent call")
	}
	running := func(id string) bool {
		t.Helper()
		r := runCLI(t, env, "agent", "state", id, "-o", "json")
		return r.code == 0 && strings.Contains(r.stdout, `"status":"running"`)
	}
	entries := func() string {
		t.Helper()
		// The first entries, which a truncation before 3 removes (later ones
		// may still be coming: the effects of the last call).
		return runCLI(t, env, "log", "show", "agent/k1", "--limit", "2", "-o", "json").must(t, "log show")
	}
	before := entries()

	out := runCLI(t, env, "agent", "stop", "p1", "--dry-run").must(t, "agent stop --dry-run")
	if !strings.Contains(out, "p1/c1") {
		t.Errorf("agent stop p1 --dry-run does not name the child that would stop:\n%s", out)
	}
	if r := runCLI(t, env, "agent", "stop", "p1"); r.code != 1 || !strings.Contains(r.stderr, "pass --yes") {
		t.Errorf("agent stop of a parent without a terminal or --yes: exit %d, stderr %q", r.code, r.stderr)
	}
	out = runCLI(t, env, "log", "truncate", "agent/k1", "--before", "3", "--dry-run").must(t, "log truncate --dry-run")
	if !strings.Contains(out, "would") {
		t.Errorf("log truncate --dry-run does not say what it would do:\n%s", out)
	}
	if !running("p1") || !running("p1/c1") {
		t.Errorf("a dry run (or a refused stop) stopped p1 or p1/c1")
	}
	if after := entries(); after != before {
		t.Errorf("log truncate --dry-run changed the stream:\nbefore %s\nafter  %s", before, after)
	}
}

// TestCLIAuditTopWithoutATerminal: top whose output is a pipe prints one
// frame after another without terminal control, shows the node away while
// it restarts instead of exiting, and goes on once it is back.
func TestCLIAuditTopWithoutATerminal(t *testing.T) {
	dir := t.TempDir()
	node := StartNode(t, tools, dir)
	url := node.URL
	cmd := exec.Command(tools.JidoBus, "top", "--interval", "100ms", "--nats-url", url, "--timeout", "2s")
	var stdout, stderr testkit.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	exited := startFollower(t, cmd)
	frames := func() int { return strings.Count(stdout.String(), "agents: ") }
	testkit.Eventually(t, "two frames", func() bool { return frames() >= 2 })
	if err := node.Stop(t); err != nil {
		t.Fatalf("serve did not stop cleanly: %v", err)
	}
	testkit.Eventually(t, "top to say it lost the node (stderr: "+stderr.String()+")", func() bool {
		return strings.Contains(stderr.String(), "jido-bus top: lost the node")
	})
	StartNode(t, tools, dir, "--listen", strings.TrimPrefix(url, "nats://"))
	runCLI(t, []string{"NATS_URL=" + url}, "agent", "start", "counter", "--id", "after-restart").must(t, "agent start")
	testkit.Eventually(t, "a frame listing the agent started after the restart", func() bool {
		return strings.Contains(stdout.String(), "after-restart")
	})
	if !strings.Contains(stderr.String(), "reconnected") {
		t.Errorf("top did not say it reconnected:\n%s", stderr.String())
	}
	if strings.Contains(stdout.String(), "\x1b[") {
		t.Errorf("top writes terminal control to a pipe:\n%q", stdout.String())
	}
	select {
	case err := <-exited:
		t.Fatalf("top exited: %v\n%s", err, stderr.String())
	default:
	}
}

// TestCLIAuditTopQuitsOnQ: on a terminal (script(1) gives it one) top
// redraws in place and ends, exit 0, when q is typed.
func TestCLIAuditTopQuitsOnQ(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is needed for a pseudo-terminal")
	}
	node := StartNode(t, tools, t.TempDir())
	cmd := exec.Command(script, "-qfec", tools.JidoBus+" top --interval 100ms --nats-url "+node.URL, "/dev/null")
	keys, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout testkit.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	exited := startFollower(t, cmd)
	testkit.Eventually(t, "a frame on the terminal", func() bool { return strings.Contains(stdout.String(), "agents: ") })
	if !strings.Contains(stdout.String(), "\x1b[H") {
		t.Errorf("top on a terminal does not redraw in place:\n%q", stdout.String())
	}
	if _, err := io.WriteString(keys, "q"); err != nil {
		t.Fatal(err)
	}
	// stdin stays open: q, not the end of input, is what ends top.
	var exit error
	testkit.Eventually(t, "top to quit on q", func() bool {
		select {
		case exit = <-exited:
			return true
		default:
			return false
		}
	})
	if exit != nil {
		t.Errorf("top after q: %v\n%q", exit, stdout.String())
	}
	_ = keys.Close()
}

// TestCLIAuditConvFollow: conv follow prints the streamed answer, ends it
// with a newline before the committed message, prints a tool call again
// when it completes, and goes on across a restart of the node, printing
// each line once.
func TestCLIAuditConvFollow(t *testing.T) {
	dir := t.TempDir()
	rig := &assistantRig{t: t, dataDir: dir, node: StartNode(t, tools, dir)}
	url := rig.node.URL
	rig.newAssistantProject(t, "fp", "tools: {\"*\": allow, write_file: ask}\n", []string{
		`{"text":"Writing a.txt now.","chunk":4,"delay_ms":20,"tool_calls":[{"id":"w1","name":"write_file","args":{"path":"a.txt","content":"AAA\n"}}]}`,
		`{"text":"a.txt is written."}`,
		`{"text":"Back after the restart.","chunk":5,"delay_ms":20}`,
	}, nil)
	conv := rig.startConv(t, "fp", "c1")

	cmd := exec.Command(tools.JidoBus, "conv", "follow", conv, "--every", "50ms", "--timeout", "2s", "--nats-url", url)
	var stdout, stderr testkit.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	exited := startFollower(t, cmd)
	testkit.Eventually(t, "the timeline so far", func() bool { return strings.Contains(stdout.String(), "started") })

	rig.run(t, "conv", "send", conv, "write a")
	rig.await(t, conv, "the approval request of w1", func(es convEvents) bool {
		return len(es.call("conversation.tool.approval.requested", "w1")) == 1
	})
	testkit.Eventually(t, "the tool call waiting (stdout: "+stdout.String()+")", func() bool { return strings.Contains(stdout.String(), "write_file") })
	rig.run(t, "conv", "approve", conv, "w1")
	rig.awaitAnswer(t, conv, "a.txt is written.")
	item := regexp.MustCompile(`^\s*\d+  \S`)
	printedItem := func(text string) func() bool {
		return func() bool {
			for _, l := range strings.Split(stdout.String(), "\n") {
				if item.MatchString(l) && strings.Contains(l, text) {
					return true
				}
			}
			return false
		}
	}
	// The committed answer, not its streamed text, which comes first.
	testkit.Eventually(t, "the answer after the tool call (stdout: "+stdout.String()+")", printedItem("a.txt is written."))
	var calls []string
	for _, l := range strings.Split(stdout.String(), "\n") {
		if strings.Contains(l, "write_file") {
			calls = append(calls, l)
		}
	}
	if len(calls) < 2 || calls[0] == calls[len(calls)-1] || !strings.Contains(calls[len(calls)-1], "->") {
		t.Errorf("the tool call is not printed again with its outcome when it completes:\n%s", strings.Join(calls, "\n"))
	}

	if err := rig.node.Stop(t); err != nil {
		t.Fatalf("serve did not stop cleanly: %v", err)
	}
	testkit.Eventually(t, "conv follow to say it lost the node (stderr: "+stderr.String()+")", func() bool {
		return strings.Contains(stderr.String(), "jido-bus conv follow: lost the node")
	})
	rig.node = StartNode(t, tools, dir, "--listen", strings.TrimPrefix(url, "nats://"))
	testkit.Eventually(t, "conv follow to reconnect (stderr: "+stderr.String()+")", func() bool {
		return strings.Contains(stderr.String(), "reconnected")
	})
	rig.run(t, "conv", "send", conv, "again")
	rig.awaitAnswer(t, conv, "Back after the restart.")
	testkit.Eventually(t, "the answer after the restart (stdout: "+stdout.String()+")", printedItem("Back after the restart."))

	// Every line is a timeline item or streamed text alone: streamed text
	// ends with a newline before the next item; no item is printed twice.
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n") {
		switch {
		case item.MatchString(l):
			if seen[l] {
				t.Errorf("printed twice: %q", l)
			}
			seen[l] = true
		case l == "Writing a.txt now." || l == "a.txt is written." || l == "Back after the restart.":
		default:
			t.Errorf("a line neither an item nor a streamed answer: %q", l)
		}
	}
	if t.Failed() {
		t.Logf("conv follow printed:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	select {
	case err := <-exited:
		t.Fatalf("conv follow exited: %v\n%s", err, stderr.String())
	default:
	}
}

// startFollower starts cmd and returns a channel that receives its exit;
// it is killed when the test ends.
func startFollower(t *testing.T, cmd *exec.Cmd) <-chan error {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		exited <- cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	return exited
}

// TestCLIAuditInterrupt: Ctrl-C ends a follower quietly with exit 0, and
// a waiting command (agent await) with exit 130 and "interrupted", not
// "context canceled".
func TestCLIAuditInterrupt(t *testing.T) {
	n := StartNode(t, tools, t.TempDir())
	runCLI(t, []string{"NATS_URL=" + n.URL}, "agent", "start", "counter", "--id", "c1").must(t, "agent start")
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"log", "tail", "agent/c1", "-f"}, 0},
		{[]string{"top"}, 0},
		{[]string{"agent", "await", "c1", "--for", "5m"}, 130},
	} {
		conns := strings.Count(n.Logs(), "Client connection created")
		cmd := exec.Command(tools.JidoBus, append(c.args, "--nats-url", n.URL)...)
		var stdout, stderr testkit.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		exited := startFollower(t, cmd)
		// The first output (or, for await, its connection reaching the
		// node) shows the command is under way.
		testkit.Eventually(t, strings.Join(c.args, " ")+" under way", func() bool {
			if c.code == 0 {
				return stdout.String() != ""
			}
			return strings.Count(n.Logs(), "Client connection created") > conns
		})
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		var err error
		testkit.Eventually(t, strings.Join(c.args, " ")+" to end on Ctrl-C", func() bool {
			select {
			case err = <-exited:
				return true
			default:
				return false
			}
		})
		code := 0
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code || strings.Contains(stderr.String(), "context canceled") {
			t.Errorf("%v after Ctrl-C: exit %d, stderr %q; want exit %d", c.args, code, stderr.String(), c.code)
		}
		if c.code == 130 && !strings.Contains(stderr.String(), "interrupted") {
			t.Errorf("%v after Ctrl-C does not say interrupted: %q", c.args, stderr.String())
		}
	}
}

// TestCLIAuditNotFound: what does not exist exits 3 and the error names
// the command typed.
func TestCLIAuditNotFound(t *testing.T) {
	n := StartNode(t, tools, t.TempDir())
	env := []string{"NATS_URL=" + n.URL}
	for _, c := range []struct {
		args []string
		say  string
	}{
		{[]string{"agent", "stop", "nope", "--dry-run"}, "agent stop"},
		{[]string{"agent", "stop", "nope"}, "agent stop"},
		{[]string{"schema", "show", "nope.nothing"}, `no schema named "nope.nothing"`},
	} {
		r := runCLI(t, env, c.args...)
		if r.code != 3 || !strings.Contains(r.stderr, c.say) {
			t.Errorf("%v: exit %d, stderr %q; want 3 and %q", c.args, r.code, r.stderr, c.say)
		}
	}
}

// TestCLIAuditConvFollowWaits: conv follow of a conversation that does not
// exist yet says it waits (a mistyped id is seen at once), then follows it
// once it starts.
func TestCLIAuditConvFollowWaits(t *testing.T) {
	n := StartNode(t, tools, t.TempDir())
	env := []string{"NATS_URL=" + n.URL}
	root := t.TempDir()
	writeProjectTree(t, root, map[string]string{"README.md": "hi\n"})
	runCLI(t, env, "project", "open", root, "--id", "p1").must(t, "project open")
	cmd := exec.Command(tools.JidoBus, "conv", "follow", "p1/later", "--every", "50ms", "--nats-url", n.URL)
	var stdout, stderr testkit.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	startFollower(t, cmd)
	testkit.Eventually(t, "conv follow to say it waits (stderr: "+stderr.String()+")", func() bool {
		return strings.Contains(stderr.String(), "no conversation p1/later yet; waiting for it to start")
	})
	runCLI(t, env, "conv", "start", "p1", "--id", "later").must(t, "conv start")
	testkit.Eventually(t, "the conversation's timeline", func() bool { return strings.Contains(stdout.String(), "started") })
	if c := strings.Count(stderr.String(), "waiting"); c != 1 {
		t.Errorf("conv follow said it waits %d times, want once:\n%s", c, stderr.String())
	}
}

// TestCLIAuditVerifyDamageIsExit2: a log whose WAL is damaged on disk is
// reported by log verify (read from the data dir, no node running) with
// exit 2, the code scripts check for damage.
func TestCLIAuditVerifyDamageIsExit2(t *testing.T) {
	dir := t.TempDir()
	n := StartNode(t, tools, dir)
	env := []string{"NATS_URL=" + n.URL}
	// Entries over many WAL blocks (32 KiB each), so that records follow
	// the damaged one: damage, not a write torn by a crash.
	pad := strings.Repeat("x", 4000)
	runCLI(t, env, "agent", "start", "conversation", "--id", "x/c1").must(t, "agent start")
	for range 40 {
		runCLI(t, env, "conv", "send", "x/c1", pad).must(t, "conv send")
	}
	// Killed, the node leaves its entries in the WAL (a clean stop
	// flushes them to tables).
	n.Kill(t)

	wals, _ := filepath.Glob(filepath.Join(dir, "log", "*.log"))
	if len(wals) == 0 {
		t.Fatal("no WAL in the node's log")
	}
	wal := wals[len(wals)-1]
	data, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(data) / 2; i < len(data)/2+16; i++ {
		data[i] ^= 0x5a
	}
	if err := os.WriteFile(wal, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, nil, "log", "verify", "--data-dir", dir)
	if r.code != 2 || !strings.Contains(r.stdout, "DAMAGED") {
		t.Errorf("log verify of a damaged WAL: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, nil, "log", "verify", "--data-dir", dir, "-o", "json")
	if r.code != 2 || !json.Valid([]byte(r.stdout)) {
		t.Errorf("log verify -o json of a damaged WAL: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestCLIAuditConvChatHasNoJSON: conv chat is a conversation with a
// person; it offers no -o json it would ignore, and refuses one.
func TestCLIAuditConvChatHasNoJSON(t *testing.T) {
	help := runCLI(t, nil, "conv", "chat", "--help").must(t, "conv chat --help")
	if strings.Contains(help, "--json") || strings.Contains(help, "--output") {
		t.Errorf("conv chat --help offers JSON output it does not print:\n%s", help)
	}
	r := runCLI(t, []string{"NATS_URL=nats://" + freeAddr(t)}, "conv", "chat", "p1", "-o", "json")
	if r.code != 1 || !strings.Contains(r.stderr, "conv follow -o json") {
		t.Errorf("conv chat -o json: exit %d, stderr %q; want 1 and what to use instead", r.code, r.stderr)
	}
}

// TestCLIAuditConvFollowWrongPrefix: conv follow with a --prefix no node
// serves fails at once, exit 4, saying the prefix may be the mistake, as
// top and log tail -f do, instead of waiting in silence.
func TestCLIAuditConvFollowWrongPrefix(t *testing.T) {
	n := StartNode(t, tools, t.TempDir())
	r := runCLI(t, []string{"NATS_URL=" + n.URL}, "conv", "follow", "p1/c1", "--prefix", "prod", "--timeout", "2s")
	if r.code != 4 || !strings.Contains(r.stderr, "is --prefix prod a mistake?") {
		t.Errorf("conv follow --prefix prod: exit %d, stderr %q; want 4 and the prefix named", r.code, r.stderr)
	}
}

// TestCLIAuditFollowerRefusedAfterARestart: the node comes back refusing
// the follower's credentials (its token was changed). log tail -f says
// "authorization failed" instead of waiting in silence, keeps trying, and
// follows again once the node accepts it.
func TestCLIAuditFollowerRefusedAfterARestart(t *testing.T) {
	dir := t.TempDir()
	node := StartNode(t, tools, dir, "--token", "tok-a")
	url := node.URL
	listen := strings.TrimPrefix(url, "nats://")
	env := []string{"NATS_URL=" + url, "NATS_TOKEN=tok-a"}
	runCLI(t, env, "agent", "start", "counter", "--id", "c1").must(t, "agent start")
	cmd := exec.Command(tools.JidoBus, "log", "tail", "agent/c1", "-f", "-o", "json", "--poll", "50ms", "--timeout", "2s", "--nats-url", url, "--token", "tok-a")
	var stdout, stderr testkit.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	exited := startFollower(t, cmd)
	testkit.Eventually(t, "the first entry", func() bool { return strings.Contains(stdout.String(), `"seq":1`) })

	if err := node.Stop(t); err != nil {
		t.Fatalf("serve did not stop cleanly: %v", err)
	}
	node = StartNode(t, tools, dir, "--listen", listen, "--token", "tok-b")
	testkit.Eventually(t, "log tail -f to say it is refused (stderr: "+stderr.String()+")", func() bool {
		return strings.Contains(stderr.String(), "authorization failed")
	})
	if strings.Contains(stderr.String(), "tok-a") {
		t.Errorf("the token is printed:\n%s", stderr.String())
	}
	if err := node.Stop(t); err != nil {
		t.Fatalf("serve did not stop cleanly: %v", err)
	}
	StartNode(t, tools, dir, "--listen", listen, "--token", "tok-a")
	runCLI(t, env, "agent", "call", "c1", "counter.increment", `{"by":1}`).must(t, "agent call")
	testkit.Eventually(t, "log tail -f to follow again (stderr: "+stderr.String()+")", func() bool {
		return strings.Contains(stdout.String(), "counter.increment")
	})
	select {
	case err := <-exited:
		t.Fatalf("log tail -f exited: %v\n%s", err, stderr.String())
	default:
	}
}

// TestCLIAuditBadPollIsRefused: log tail -f --poll 0 (or negative) is
// refused with what to give, not a panic.
func TestCLIAuditBadPollIsRefused(t *testing.T) {
	n := StartNode(t, tools, t.TempDir())
	env := []string{"NATS_URL=" + n.URL}
	runCLI(t, env, "agent", "start", "counter", "--id", "c1").must(t, "agent start")
	for _, poll := range []string{"0", "-1s"} {
		r := runCLI(t, env, "log", "tail", "agent/c1", "-f", "--poll", poll)
		if r.code != 1 || strings.Contains(r.stderr, "panic") || !strings.Contains(r.stderr, "want a positive duration") {
			t.Errorf("log tail -f --poll %s: exit %d, stderr %q", poll, r.code, r.stderr)
		}
	}
}

// TestCLIAuditEmptyServer: -s "" (a script's unset variable) is refused
// saying so, rather than "no NATS server at " and exit 4.
func TestCLIAuditEmptyServer(t *testing.T) {
	for _, s := range []string{"", " ", ","} {
		r := runCLI(t, nil, "agent", "list", "-s", s)
		if r.code != 1 || !strings.Contains(r.stderr, "no server: give nats://host:port") {
			t.Errorf("agent list -s %q: exit %d, stderr %q; want 1 and what to give", s, r.code, r.stderr)
		}
	}
}
