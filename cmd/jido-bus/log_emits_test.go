package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/agents/runtime/emitapi"
	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/node"
)

// emitLine is one emit as `log emits -o json` prints it.
type emitLine struct {
	Position string `json:"position"`
	Seq      uint64 `json:"seq"`
	Index    int    `json:"index"`
	Subject  string `json:"subject"`
	Event    struct {
		ID   string `json:"id"`
		Data struct {
			Count int `json:"count"`
		} `json:"data"`
	} `json:"event"`
}

// counts returns the count each emit carries, in order.
func counts(emits []emitLine) []int {
	var out []int
	for _, e := range emits {
		out = append(out, e.Event.Data.Count)
	}
	return out
}

func logEmitsJSON(t *testing.T, args ...string) (emits []emitLine, next string) {
	t.Helper()
	out, err := runRoot(t, append([]string{"log", "emits", "-o", "json"}, args...)...)
	if err != nil {
		t.Fatalf("log emits %v: %v\n%s", args, err, out)
	}
	var r struct {
		Emits []emitLine `json:"emits"`
		Next  string     `json:"next"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("log emits %v: %v\n%s", args, err, out)
	}
	return r.Emits, r.Next
}

// TestLogEmitsThroughANodeAndOnTheDataDir: `log emits` prints a counter's
// emits in order with their positions, --after one of them prints what
// follows it, --type filters, and the data dir of the stopped node gives
// the same emits; bad input is refused with what to give instead.
func TestLogEmitsThroughANodeAndOnTheDataDir(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := t.TempDir()
	n := startNode(t, dir)
	closed := false
	defer func() {
		if !closed {
			n.Shutdown(context.Background())
		}
	}()
	if _, err := n.Runtime().Start(context.Background(), runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	increment(t, n, "c1", 5)
	url := []string{"--nats-url", n.URL()}

	all, next := logEmitsJSON(t, append([]string{"agent/c1"}, url...)...)
	if !slices.Equal(counts(all), []int{1, 2, 3, 4, 5}) {
		t.Fatalf("log emits agent/c1: counts %v, want 1 to 5", counts(all))
	}
	for _, e := range all {
		if e.Position != fmt.Sprintf("%d.%d", e.Seq, e.Index) || e.Subject != "jido.emit.c1.counter.changed" {
			t.Errorf("emit %+v: want position SEQ.INDEX on jido.emit.c1.counter.changed", e)
		}
	}
	if want := fmt.Sprint(all[4].Seq); next != want {
		t.Errorf("next %q, want %q (after the last decision read)", next, want)
	}
	rest, _ := logEmitsJSON(t, append([]string{"agent/c1", "--after", all[1].Position}, url...)...)
	if !slices.Equal(counts(rest), []int{3, 4, 5}) {
		t.Errorf("--after %s: counts %v, want 3 to 5", all[1].Position, counts(rest))
	}
	if none, next := logEmitsJSON(t, append([]string{"agent/c1", "--after", next}, url...)...); len(none) != 0 || next != fmt.Sprint(all[4].Seq) {
		t.Errorf("--after the last: %v, next %s; want none, and the same next", counts(none), next)
	}
	if none, _ := logEmitsJSON(t, append([]string{"--type", "other.*"}, url...)...); len(none) != 0 {
		t.Errorf("--type other.*: %v", counts(none))
	}
	table, err := runRoot(t, append([]string{"log", "emits", "agent/c1", "--after", all[3].Position}, url...)...)
	if err != nil || !strings.Contains(table, "POSITION") || !strings.Contains(table, all[4].Position+" ") ||
		!strings.Contains(table, `{"count":5}`) || strings.Contains(table, `{"count":4}`) ||
		!strings.Contains(table, "--after "+fmt.Sprint(all[4].Seq)) {
		t.Errorf("the table after %s: %v\n%s", all[3].Position, err, table)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"agent/c1", "--after", "x"}, "--after"},
		{[]string{"agent/c1", "--after", "3.-1"}, "index"},
		{[]string{"agent/nosuch"}, "log streams"},
		{[]string{"agent/c1", "-f", "--poll", "0s"}, "--poll"},
	} {
		out, err := runRoot(t, append(append([]string{"log", "emits"}, c.args...), url...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("log emits %v: %v (want an error saying %q)\n%s", c.args, err, c.want, out)
		}
	}

	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	closed = true
	offline, _ := logEmitsJSON(t, "agent/c1", "--data-dir", dir)
	if len(offline) != len(all) {
		t.Fatalf("from the data dir: %v, through the node %v", counts(offline), counts(all))
	}
	for i := range all {
		if offline[i].Position != all[i].Position || offline[i].Event.ID != all[i].Event.ID {
			t.Errorf("emit %d from the data dir is %s %s, through the node %s %s", i, offline[i].Position, offline[i].Event.ID, all[i].Position, all[i].Event.ID)
		}
	}
}

// TestLogEmitsReadsEveryPage: a read that fills pages (by size here)
// goes on after each until the end, each emit once and in order.
func TestLogEmitsReadsEveryPage(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	if _, err := n.Runtime().Start(context.Background(), runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	increment(t, n, "c1", 20)
	b := emitapi.Local{Log: n.Log(), MaxBytes: 2048}
	var got []int
	pages := 0
	next, err := readEmitPages(context.Background(), b, runtime.EmitsRequest{Stream: "agent/c1"}, func(p runtime.EmitsPage) error {
		pages++
		for _, e := range p.Emits {
			var ev struct {
				Data struct{ Count int }
			}
			if err := json.Unmarshal(e.Event, &ev); err != nil {
				return err
			}
			got = append(got, ev.Data.Count)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int, 20)
	for i := range want {
		want[i] = i + 1
	}
	if !slices.Equal(got, want) || pages < 3 {
		t.Errorf("%d pages of counts %v; want 1 to 20 over several pages", pages, got)
	}
	if head, _ := logEmitsJSON(t, "agent/c1", "--nats-url", n.URL()); next.String() != fmt.Sprint(head[19].Seq) {
		t.Errorf("next %s after every page, want %d", next, head[19].Seq)
	}
}

// TestLogEmitsFollowsAcrossARestart: log emits -f through a node prints
// each emit as it is committed, keeps following when the node stops and
// starts again on the same data dir and port, and prints each emit once.
func TestLogEmitsFollowsAcrossARestart(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := t.TempDir()
	start := func(listen string) *node.Node {
		n, err := node.Start(context.Background(), node.Config{DataDir: dir, NATS: node.NATSConfig{Listen: listen}, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := start("127.0.0.1:0")
	if _, err := n.Runtime().Start(context.Background(), runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	increment(t, n, "c1", 3)
	first, _ := logEmitsJSON(t, "agent/c1", "--nats-url", n.URL())
	host := strings.TrimPrefix(n.URL(), "nats://")

	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut testkit.Buffer
	done := make(chan error, 1)
	go func() {
		root := newRootCmd()
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetIn(strings.NewReader(""))
		root.SetArgs([]string{"log", "emits", "agent/c1", "--after", first[0].Position, "-f", "-o", "json",
			"--poll", "20ms", "--timeout", "1s", "--nats-url", n.URL()})
		done <- root.ExecuteContext(ctx)
	}()
	printed := func() []int {
		var got []int
		for line := range strings.Lines(out.String()) {
			var e emitLine
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			got = append(got, e.Event.Data.Count)
		}
		return got
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("log emits -f: %v\n%s", err, errOut.String())
		}
	}()
	testkit.Eventually(t, "the emits after the first", func() bool { return len(printed()) == 2 })
	increment(t, n, "c1", 2)
	testkit.Eventually(t, "counts 4 and 5", func() bool { return len(printed()) == 4 })

	if err := n.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "word of the lost connection", func() bool { return strings.Contains(errOut.String(), "reconnecting") })
	n = start(host)
	defer n.Shutdown(context.Background())
	increment(t, n, "c1", 3)
	testkit.Eventually(t, "counts 6 to 8", func() bool { return len(printed()) >= 7 })
	if got := printed(); !slices.Equal(got, []int{2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("printed counts %v: want 2 to 8, each once", got)
	}
}
