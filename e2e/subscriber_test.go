package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// buildSubscriber builds examples/subscriber, the README's recipe.
func buildSubscriber(t *testing.T) string {
	t.Helper()
	bin, err := tools.BuildProgram(t.TempDir(), "./examples/subscriber")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// subscriber is a running examples/subscriber.
type subscriber struct {
	cmd  *exec.Cmd
	out  *testkit.Buffer
	done chan error
}

// startSubscriber runs the subscriber, appending what it prints to out
// (one buffer across its restarts).
func startSubscriber(t *testing.T, bin string, out *testkit.Buffer, url, posFile, agent string) *subscriber {
	t.Helper()
	s := &subscriber{out: out, done: make(chan error, 1)}
	s.cmd = exec.Command(bin, "-s", url, "-pos", posFile, agent)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		err := <-s.done
		s.done <- err
	})
	return s
}

// stop sends SIGTERM, as `kill` does, and waits for it to exit: it stops
// between two events, each printed and its position saved.
func (s *subscriber) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		s.done <- err
		if err != nil {
			t.Fatalf("subscriber exited with %v:\n%s", err, s.out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("subscriber still running 30s after SIGTERM:\n%s", s.out.String())
	}
}

// printed is one line of the subscriber: "SEQ.INDEX TYPE ID DATA".
type printed struct{ position, typ, id, data string }

func (s *subscriber) printed(t *testing.T) []printed {
	t.Helper()
	var out []printed
	for line := range strings.Lines(s.out.String()) {
		f := strings.SplitN(strings.TrimSpace(line), " ", 4)
		if len(f) != 4 {
			t.Fatalf("subscriber printed %q:\n%s", line, s.out.String())
		}
		out = append(out, printed{f[0], f[1], f[2], f[3]})
	}
	return out
}

// logEmits is what `jido-bus log emits STREAM -o json` prints.
type logEmits struct {
	Emits []struct {
		Position string
		Seq      uint64
		Index    int
		Subject  string
		Status   string
		Event    struct {
			ID   string
			Type string
			Data json.RawMessage
		}
	}
	Next string
}

func readLogEmits(t *testing.T, args ...string) logEmits {
	t.Helper()
	var r logEmits
	out := tools.Run(t, append([]string{"log", "emits", "-o", "json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("log emits %v: %v\n%s", args, err, out)
	}
	return r
}

// TestSubscriberCatchesUpWithoutGap runs the README's subscriber against
// the real binary: casts while it runs, while it is stopped, and while
// the node is killed with SIGKILL and restarted under it. At the end it
// has printed every emit the agent made exactly once, in order — each
// count from 1 up, with the positions and ids the log holds.
func TestSubscriberCatchesUpWithoutGap(t *testing.T) {
	dir := t.TempDir()
	node := StartNode(t, tools, dir)
	url := node.URL
	tools.Run(t, "agent", "start", "counter", "--id", "c1", "--nats-url", url)
	pos := filepath.Join(t.TempDir(), "c1.pos")
	cast := func(n int) {
		t.Helper()
		node.NATS(t, "pub", "jido.agent.c1.counter.increment", `{"by":1}`, "--count", strconv.Itoa(n))
	}
	waitPrinted := func(s *subscriber, n int) {
		t.Helper()
		testkit.EventuallyNil(t, fmt.Sprintf("the subscriber to print %d emits", n), func() error {
			if out := s.out.String(); strings.Count(out, "\n") < n {
				return fmt.Errorf("it printed:\n%s", out)
			}
			return nil
		})
	}

	// Live.
	bin := buildSubscriber(t)
	out := &testkit.Buffer{}
	sub := startSubscriber(t, bin, out, url, pos, "c1")
	cast(5)
	waitPrinted(sub, 5)
	sub.stop(t)
	// Down: missed live, read from the log when it is back, with what
	// comes live meanwhile.
	cast(5)
	sub = startSubscriber(t, bin, out, url, pos, "c1")
	cast(5)
	waitPrinted(sub, 15)

	// The node killed while emits flow, and restarted on the same port:
	// what it published before it died, what it had committed and not
	// published, what comes after.
	flow, flowDone := node.StartNATS(t, "pub", "jido.agent.c1.counter.increment", `{"by":1}`, "--count", "200", "--sleep", "5ms")
	waitPrinted(sub, 20)
	node.Kill(t)
	atKill := strings.Count(sub.out.String(), "\n")
	node = StartNode(t, tools, dir, "--listen", strings.TrimPrefix(url, "nats://"))
	// The publisher gives up when the node dies, or goes on once it is
	// back; either way it ends before the count.
	if err := flowDone(); err != nil {
		t.Logf("the publisher: %v\n%s", err, flow.String())
	}
	cast(5)

	// Settled: every emit's outcome is recorded, and the subscriber has
	// printed as many as the log holds.
	var want logEmits
	testkit.EventuallyNil(t, "every emit published and printed", func() error {
		want = readLogEmits(t, "agent/c1", "--nats-url", url)
		var unconfirmed []string
		for _, e := range want.Emits {
			if e.Status != "published" {
				unconfirmed = append(unconfirmed, e.Position+" "+e.Status)
			}
		}
		if out := sub.out.String(); len(unconfirmed) > 0 || strings.Count(out, "\n") < len(want.Emits) {
			return fmt.Errorf("the log holds %d emits, these not published: %v; the subscriber printed:\n%s", len(want.Emits), unconfirmed, out)
		}
		return nil
	})
	sub.stop(t)
	got := sub.printed(t)
	if len(got) != len(want.Emits) {
		t.Fatalf("the subscriber printed %d emits, the log holds %d:\n%s", len(got), len(want.Emits), sub.out.String())
	}
	for i, e := range want.Emits {
		p := got[i]
		var d struct{ Count int }
		if err := json.Unmarshal([]byte(p.data), &d); err != nil {
			t.Fatalf("line %d: data %q: %v", i+1, p.data, err)
		}
		if p.position != e.Position || p.id != e.Event.ID || p.typ != "counter.changed" || d.Count != i+1 {
			t.Fatalf("line %d: %+v; the log's emit %d is %s %s (count %s); the subscriber printed:\n%s",
				i+1, p, i+1, e.Position, e.Event.ID, e.Event.Data, sub.out.String())
		}
	}
	if atKill >= len(want.Emits)-5 {
		t.Errorf("the subscriber had printed %d of the %d emits when the node was killed: the flow had ended", atKill, len(want.Emits))
	}
	t.Logf("%d emits in all, %d printed before the node was killed, each printed once", len(want.Emits), atKill)
}

// TestLogEmitsWithNATSCLI: the NATS CLI sees each emit's position in its
// headers; `jido-bus log emits STREAM --after POS` prints what follows
// that position, the same events, from the node and from the data dir
// once the node has stopped; -f keeps printing new ones; and a client
// (the role that subscribes to emits) may read them, not the rest of
// the log.
func TestLogEmitsWithNATSCLI(t *testing.T) {
	node := startSecured(t)
	admin := func(args ...string) string {
		t.Helper()
		out, err := natsAs(t, node, "boss", adminPW, args...)
		if err != nil {
			t.Fatalf("nats %v as admin: %v\n%s", args, err, out)
		}
		return out
	}
	admin("req", "--raw", "jido.api.agent.start", `{"type":"counter","id":"c1"}`)
	asClient := []string{"--nats-url", node.URL, "--user", "app", "--password", clientPW}

	// nats sub --headers-only shows each emit's position.
	base := []string{"--user", "app", "--password", clientPW, "--inbox-prefix", "_INBOX_app"}
	subOut, subDone := node.StartNATS(t, append(base, "sub", "jido.emit.c1.>", "--headers-only", "--count", "3")...)
	testkit.Eventually(t, "the subscription", func() bool { return strings.Contains(subOut.String(), "Subscribing on") })
	admin("pub", "jido.agent.c1.counter.increment", `{"by":5}`, "--count", "3")
	if err := subDone(); err != nil {
		t.Fatalf("nats sub: %v\n%s", err, subOut.String())
	}
	var positions []string
	for _, msg := range strings.Split(subOut.String(), "Received on")[1:] {
		header := func(name string) string {
			for line := range strings.Lines(msg) {
				if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+": "); ok {
					return v
				}
			}
			t.Fatalf("no %s header in\n%s", name, msg)
			return ""
		}
		if header("Jido-Stream") != "agent/c1" {
			t.Errorf("Jido-Stream %q, want agent/c1", header("Jido-Stream"))
		}
		positions = append(positions, header("Jido-Seq")+"."+header("Jido-Emit-Index"))
	}

	// log emits after the first prints the other two, at those positions.
	read := readLogEmits(t, append([]string{"agent/c1", "--after", positions[0]}, asClient...)...)
	var got []string
	for _, e := range read.Emits {
		got = append(got, e.Position)
	}
	if !slices.Equal(got, positions[1:]) || read.Next != strings.Split(positions[2], ".")[0] {
		t.Errorf("log emits --after %s: %v next %s; the live headers were %v", positions[0], got, read.Next, positions)
	}
	table := tools.Run(t, append([]string{"log", "emits", "agent/c1"}, asClient...)...)
	for i, p := range positions {
		if !strings.Contains(table, p+" ") || !strings.Contains(table, fmt.Sprintf(`{"count":%d}`, 5*(i+1))) {
			t.Errorf("the table lacks %s (count %d):\n%s", p, 5*(i+1), table)
		}
	}
	// A client reads emits, and only emits, from the log.
	if r := runCLI(t, nil, append([]string{"log", "show", "agent/c1"}, asClient...)...); r.code == 0 || !strings.Contains(r.stderr, "forbidden") {
		t.Errorf("a client read log show: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// -f prints what comes next, one JSON emit a line.
	follow := exec.Command(tools.JidoBus, append([]string{"log", "emits", "agent/c1", "--after", positions[2], "-f", "-o", "json", "--poll", "50ms"}, asClient...)...)
	followed := &testkit.Buffer{}
	follow.Stdout, follow.Stderr = followed, followed
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- follow.Wait() }()
	t.Cleanup(func() {
		_ = follow.Process.Kill()
		<-done
	})
	admin("pub", "jido.agent.c1.counter.increment", `{"by":1}`, "--count", "2")
	testkit.EventuallyNil(t, "log emits -f to print the two new emits", func() error {
		if out := followed.String(); strings.Count(out, `"type":"counter.changed"`) < 2 {
			return fmt.Errorf("it printed:\n%s", out)
		}
		return nil
	})
	if s := followed.String(); !strings.Contains(s, `"count":16`) || !strings.Contains(s, `"count":17`) || strings.Contains(s, `"count":15`) {
		t.Errorf("log emits -f after %s printed:\n%s", positions[2], s)
	}
	_ = follow.Process.Signal(syscall.SIGINT)
	if err := <-done; err != nil {
		t.Errorf("log emits -f on SIGINT: %v\n%s", err, followed.String())
	}
	done <- nil

	// The data dir, once the node has stopped: the same emits.
	if err := node.Stop(t); err != nil {
		t.Fatal(err)
	}
	offline := readLogEmits(t, "agent/c1", "--after", positions[0], "--data-dir", node.DataDir)
	if len(offline.Emits) != 4 || offline.Emits[0].Position != positions[1] || offline.Emits[0].Subject != "jido.emit.c1.counter.changed" {
		t.Errorf("from the data dir after %s: %+v", positions[0], offline)
	}
}
