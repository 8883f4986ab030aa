package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// tryRun runs the jido-bus CLI with stdin not a terminal (/dev/null) and
// returns stdout, stderr and the error, for the commands expected to fail.
func tryRun(args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tools.JidoBus, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// TestCLIOutputShapes: -o json of agent list and log show is one object
// holding the list and the cursor that continues it.
func TestCLIOutputShapes(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	on := []string{"--nats-url", node.URL}
	for i := range 3 {
		tools.Run(t, append([]string{"agent", "start", "counter", "--id", fmt.Sprintf("c%d", i)}, on...)...)
	}
	tools.Run(t, append([]string{"agent", "call", "c0", "counter.increment", `{"by":2}`}, on...)...)

	var agents struct {
		Agents []struct {
			ID string `json:"id"`
		} `json:"agents"`
		Next *string `json:"next"`
	}
	out := tools.Run(t, append([]string{"agent", "list", "-o", "json", "--limit", "2"}, on...)...)
	if err := json.Unmarshal([]byte(out), &agents); err != nil || len(agents.Agents) != 2 || agents.Next == nil {
		t.Fatalf("agent list -o json --limit 2: %v\n%s", err, out)
	}
	out = tools.Run(t, append([]string{"agent", "list", "--json", "--after", *agents.Next}, on...)...)
	agents.Next = nil
	if err := json.Unmarshal([]byte(out), &agents); err != nil || len(agents.Agents) != 1 || agents.Agents[0].ID != "c2" || agents.Next != nil ||
		!strings.Contains(out, `"next":null`) {
		t.Fatalf("agent list --json --after: %v\n%s", err, out)
	}

	var entries struct {
		Entries []struct {
			Stream string `json:"stream"`
			Seq    uint64 `json:"seq"`
		} `json:"entries"`
		Next *uint64 `json:"next"`
	}
	out = tools.Run(t, append([]string{"log", "show", "agent/c0", "--limit", "1", "-o", "json"}, on...)...)
	if err := json.Unmarshal([]byte(out), &entries); err != nil || len(entries.Entries) != 1 || entries.Entries[0].Seq != 1 || entries.Next == nil || *entries.Next != 2 {
		t.Fatalf("log show --limit 1 -o json: %v\n%s", err, out)
	}
	out = tools.Run(t, append([]string{"log", "show", "agent/c0", "--limit", "1"}, on...)...)
	if !strings.Contains(out, "continue with --from 2") {
		t.Fatalf("log show --limit 1 (table) does not say how to go on:\n%s", out)
	}
	out = tools.Run(t, append([]string{"log", "show", "agent/c0", "--from", "2", "-o", "json"}, on...)...)
	entries.Next = nil
	if err := json.Unmarshal([]byte(out), &entries); err != nil || len(entries.Entries) == 0 || entries.Next != nil {
		t.Fatalf("log show to the end -o json: %v\n%s", err, out)
	}
}

// TestCLILogTailFollowsAcrossARestart: `log tail -f` keeps following when
// the node stops and starts again on the same data dir and port: every
// entry printed once, none missed.
func TestCLILogTailFollowsAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	node := StartNode(t, tools, dir)
	url := node.URL
	on := []string{"--nats-url", url}
	tools.Run(t, append([]string{"agent", "start", "counter", "--id", "c1"}, on...)...)

	cmd := exec.Command(tools.JidoBus, "log", "tail", "agent/c1", "-f", "-o", "json", "--poll", "50ms", "--timeout", "2s", "--nats-url", url)
	var stdout, stderr testkit.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	seqs := func() []uint64 {
		var out []uint64
		for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
			var e struct {
				Seq uint64 `json:"seq"`
			}
			if line != "" && json.Unmarshal([]byte(line), &e) == nil {
				out = append(out, e.Seq)
			}
		}
		return out
	}
	head := func() uint64 {
		var s struct {
			Streams []struct {
				Head uint64 `json:"head"`
			} `json:"streams"`
		}
		out := tools.Run(t, "log", "streams", "--stream-prefix", "agent/c1", "-o", "json", "--nats-url", url)
		if err := json.Unmarshal([]byte(out), &s); err != nil || len(s.Streams) != 1 {
			t.Fatalf("log streams: %v\n%s", err, out)
		}
		return s.Streams[0].Head
	}
	caughtUp := func(what string) {
		t.Helper()
		want := head()
		testkit.Eventually(t, fmt.Sprintf("log tail -f to print up to seq %d %s (stderr: %s)", want, what, stderr.String()), func() bool {
			s := seqs()
			return len(s) > 0 && s[len(s)-1] >= want
		})
	}

	tools.Run(t, append([]string{"agent", "call", "c1", "counter.increment", `{"by":1}`}, on...)...)
	caughtUp("before the restart")
	if err := node.Stop(t); err != nil {
		t.Fatalf("serve did not stop cleanly: %v", err)
	}
	testkit.Eventually(t, "log tail -f to say it lost the node", func() bool { return strings.Contains(stderr.String(), "reconnecting") })
	node = StartNode(t, tools, dir, "--listen", strings.TrimPrefix(url, "nats://"))
	if node.URL != url {
		t.Fatalf("the node came back at %s, not %s", node.URL, url)
	}
	for range 3 {
		tools.Run(t, append([]string{"agent", "call", "c1", "counter.increment", `{"by":1}`}, on...)...)
	}
	caughtUp("after the restart")
	if !strings.Contains(stderr.String(), "reconnected") {
		t.Errorf("log tail -f did not say it reconnected:\n%s", stderr.String())
	}
	for i, s := range seqs() {
		if s != uint64(i+1) {
			t.Fatalf("log tail -f printed seqs %v: want 1, 2, 3… each once", seqs())
		}
	}
	select {
	case err := <-exited:
		exited <- err
		t.Fatalf("log tail -f exited: %v\n%s", err, stderr.String())
	default:
	}
}

// TestCLILogTruncateWantsYes: with stdin not a terminal, log truncate
// without --yes is refused, says to pass --yes, and removes nothing.
func TestCLILogTruncateWantsYes(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	on := []string{"--nats-url", node.URL}
	tools.Run(t, append([]string{"agent", "start", "counter", "--id", "c1"}, on...)...)
	tools.Run(t, append([]string{"agent", "call", "c1", "counter.increment", `{"by":1}`}, on...)...)

	_, stderr, err := tryRun(append([]string{"log", "truncate", "agent/c1", "--before", "2"}, on...)...)
	if err == nil || !strings.Contains(stderr, "pass --yes") {
		t.Fatalf("log truncate without --yes and without a terminal: %v\n%s", err, stderr)
	}
	if out := tools.Run(t, append([]string{"log", "show", "agent/c1", "--from", "1", "--limit", "1", "-o", "json"}, on...)...); !strings.Contains(out, `"seq":1`) {
		t.Fatalf("a refused truncate removed entries:\n%s", out)
	}
	out := tools.Run(t, append([]string{"log", "truncate", "agent/c1", "--before", "2", "--yes"}, on...)...)
	if !strings.Contains(out, "removed") {
		t.Fatalf("log truncate --yes:\n%s", out)
	}
}
