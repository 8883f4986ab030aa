package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/node"
)

// startTopNode starts a node on an embedded NATS server with counter c1,
// which has decided three signals received on NATS, and idle counter c2.
func startTopNode(t *testing.T) *node.Node {
	t.Helper()
	n, err := node.Start(context.Background(), node.Config{DataDir: t.TempDir(), NATS: node.NATSConfig{Listen: "127.0.0.1:0"}, NoSync: true, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Shutdown(context.Background()) })
	for _, id := range []string{"c1", "c2"} {
		if out, err := runRoot(t, "agent", "start", "counter", "--id", id, "--nats-url", n.URL()); err != nil {
			t.Fatalf("start %s: %v\n%s", id, err, out)
		}
	}
	nc, err := nats.Connect(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for range 3 {
		msg, err := nc.Request("jido.agent.c1.counter.increment", []byte(`{"by":1}`), 5*time.Second)
		if err != nil || !bytes.Contains(msg.Data, []byte(`"ok":true`)) {
			t.Fatalf("increment c1: %v %v", msg, err)
		}
	}
	return n
}

func TestTopOnce(t *testing.T) {
	// Registered first, so it runs after the cleanups that stop the node.
	t.Cleanup(func() { goleak.VerifyNone(t) })
	n := startTopNode(t)
	url := []string{"--nats-url", n.URL()}

	out, err := runRoot(t, append([]string{"top", "--once", "--json", "--agents", "5"}, url...)...)
	if err != nil {
		t.Fatalf("top --once --json: %v\n%s", err, out)
	}
	var f topFrame
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("top --once --json printed %q: %v", out, err)
	}
	if f.Version != "test" || f.ServerID == "" || f.Uptime == "" || f.URL != n.URL() {
		t.Errorf("node: %+v", f)
	}
	if f.Agents.Active < 1 || f.Agents.Total != 2 || f.Agents.Active+f.Agents.Passive != f.Agents.Total {
		t.Errorf("agents: %+v", f.Agents)
	}
	if f.Totals["received"] != 3 || f.Totals["commits"] < 3 || f.Totals["api_requests"] < 2 || f.Totals["rejected"] != 0 {
		t.Errorf("totals: %v", f.Totals)
	}
	if !f.RatesSinceStart || f.RateWindow <= 0 || f.Rates["received"] <= 0 || !sameKeys(f.Rates, f.Totals) {
		t.Errorf("rates of the first frame: %v over %gs (since start: %v)", f.Rates, f.RateWindow, f.RatesSinceStart)
	}
	if len(f.Busiest) != 2 || f.Busiest[0].ID != "c1" || f.Busiest[0].Type != "counter" || f.Busiest[0].Version != 3 {
		t.Errorf("busiest: %+v", f.Busiest)
	}

	out, err = runRoot(t, append([]string{"top", "--once", "--agents", "1"}, url...)...)
	if err != nil {
		t.Fatalf("top --once: %v\n%s", err, out)
	}
	for _, want := range []string{"jido-bus test", "2 in all", "signals in", "averaged since the node started", "BUSIEST", "c1 "} {
		if !strings.Contains(out, want) {
			t.Errorf("top --once does not show %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "c2") || strings.Contains(out, "\x1b") {
		t.Errorf("top --once --agents 1 shows c2 or escape codes:\n%q", out)
	}
}

// TestTopRepeatsFramesWhenNotATerminal runs top until it has printed three
// frames, as a pipe would see them.
func TestTopRepeatsFramesWhenNotATerminal(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	n := startTopNode(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &frameWriter{cancelAfter: 3, cancel: cancel}
	root := newRootCmd()
	root.SetOut(w)
	root.SetErr(w)
	root.SetArgs([]string{"top", "--interval", "10ms", "--nats-url", n.URL()})
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("top: %v\n%s", err, w.String())
	}
	out := w.String()
	if got := strings.Count(out, "jido-bus test · server"); got != 3 {
		t.Errorf("%d frames, want 3:\n%s", got, out)
	}
	if strings.Count(out, "\n\njido-bus test · server") != 2 || strings.Contains(out, "\x1b") {
		t.Errorf("frames are not separated by a blank line, or have escape codes:\n%q", out)
	}
	// The second poll comes an interval after the first; a third one may
	// come within the same millisecond of uptime, which is no window.
	first, later, _ := strings.Cut(out, "\n\njido-bus test · server")
	if !strings.Contains(first, "averaged since the node started") || !strings.Contains(later, "over the last") {
		t.Errorf("the first frame's rates are not since the start, or no later one's over the interval:\n%s", out)
	}
}

// frameWriter collects top's output and cancels it after some frames.
// (It hides its buffer's WriteString, so every write goes through Write.)
type frameWriter struct {
	buf                 bytes.Buffer
	frames, cancelAfter int
	cancel              func()
}

func (w *frameWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("agents:")) {
		if w.frames++; w.frames == w.cancelAfter {
			w.cancel()
		}
	}
	return w.buf.Write(p)
}

func (w *frameWriter) String() string { return w.buf.String() }

func TestTopErrorsSayWhatToDo(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	n := startTopNode(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--nats-url", nobody}, "no NATS server at " + nobody + " (nats: no servers available for connection): start a node with 'jido-bus serve'"},
		{[]string{"--nats-url", n.URL(), "--prefix", "other"}, "no jido-bus node answers on other.api.ping at " + n.URL() + ", but one answers under --prefix jido: is --prefix other a mistake?"},
		{[]string{"--interval", "0s"}, "--interval 0s: want a positive duration"},
		{[]string{"--agents", "-1"}, "--agents -1: want 0"},
	}
	for _, c := range cases {
		_, err := runRoot(t, append([]string{"top", "--once"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("top --once %v: %v, want it to say %q", c.args, err, c.want)
		}
	}

	// The list request top sends, and one it refuses.
	nc, err := nats.Connect(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for req, want := range map[string]string{
		`{"sort":"queue","limit":1}`:                     `"agents":[{"id":"c1"`,
		`{"sort":"queue","limit":1,"skip_passive":true}`: `"agents":[{"id":"c1"`,
		`{"sort":"size"}`:                                `"type":"invalid_request"`,
		`{"limit":-1}`:                                   `"type":"invalid_request"`,
	} {
		msg, err := nc.Request("jido.api.agent.list", []byte(req), 5*time.Second)
		if err != nil || !bytes.Contains(msg.Data, []byte(want)) || bytes.Contains(msg.Data, []byte(`"c2"`)) {
			t.Errorf("list %s: %v %s, want %s", req, err, msg.Data, want)
		}
	}
}

func TestTopRates(t *testing.T) {
	sample := func(server string, uptime time.Duration, received uint64) topSample {
		return topSample{ServerID: server, Uptime: uptime, Totals: map[string]uint64{"received": received, "rejected": 0}}
	}
	cases := []struct {
		name       string
		prev, cur  topSample
		received   float64
		window     time.Duration
		sinceStart bool
	}{
		{"first poll", topSample{}, sample("s1", 4*time.Second, 100), 25, 4 * time.Second, true},
		{"next poll", sample("s1", 10*time.Second, 100), sample("s1", 12*time.Second, 300), 100, 2 * time.Second, false},
		{"nothing new", sample("s1", 10*time.Second, 100), sample("s1", 10500*time.Millisecond, 100), 0, 500 * time.Millisecond, false},
		{"node restarted", sample("s1", 10*time.Second, 500), sample("s1", 2*time.Second, 40), 20, 2 * time.Second, true},
		{"total went back", sample("s1", 10*time.Second, 500), sample("s1", 20*time.Second, 100), 5, 20 * time.Second, true},
		{"another server", sample("s1", 10*time.Second, 100), sample("s2", 12*time.Second, 300), 25, 12 * time.Second, true},
		{"just started", topSample{}, sample("s1", 0, 0), 0, 0, true},
	}
	for _, c := range cases {
		rates, window, sinceStart := topRates(c.prev, c.cur)
		if rates["received"] != c.received || rates["rejected"] != 0 || len(rates) != 2 || window != c.window || sinceStart != c.sinceStart {
			t.Errorf("%s: rates %v over %s (since start %v), want received %g over %s (since start %v)",
				c.name, rates, window, sinceStart, c.received, c.window, c.sinceStart)
		}
	}
}

func TestTopFrameOnATerminal(t *testing.T) {
	var b bytes.Buffer
	f := topFrame{URL: "nats://x", Version: "v1", Totals: map[string]uint64{"received": 7}, Rates: map[string]float64{"received": 1.5}}
	if err := writeTopFrame(&b, f, false, true); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, ansiHome+"jido-bus v1") || !strings.HasSuffix(out, ansiClearLine+ansiClearBelow) ||
		!strings.Contains(out, "1.5") || strings.Contains(out, "\n\n") {
		t.Errorf("frame on a terminal: %q", out)
	}
}

func sameKeys[A, B any](a map[string]A, b map[string]B) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range maps.Keys(a) {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}
