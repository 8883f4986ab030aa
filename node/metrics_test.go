package node

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/nats-io/nats.go"
	dto "github.com/prometheus/client_model/go"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// constValues returns the string constants of the Go file at path whose
// names start with prefix: the lists the metrics must know, read from
// the source so that a constant added there and forgotten here fails.
func constValues(t *testing.T, path, prefix string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, prefix) || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, _ := strconv.Unquote(lit.Value)
					out = append(out, v)
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s constants in %s", prefix, path)
	}
	return out
}

// series returns the value of every series of the metric name, by its
// labels written name=value joined with ",".
func series(t *testing.T, n *Node, name string) map[string]float64 {
	t.Helper()
	mfs, err := n.metrics.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			out[strings.Join(labels, ",")] = value(m)
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return -1
}

// TestMetricsStartAtZeroForEveryLabel: a fresh node exports every known
// label of its labelled counters at zero, so that a rate() or an alert on
// a reason that never happened yet has a series to work on.
func TestMetricsStartAtZeroForEveryLabel(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	for _, name := range []string{"jido_signals_refused_total", "jido_dead_letters_total"} {
		got := series(t, n, name)
		for _, reason := range constValues(t, "../bus/errors.go", "Reason") {
			if v, ok := got["reason="+reason]; !ok || v != 0 {
				t.Errorf("%s{reason=%q} = %v (present %v), want 0", name, reason, v, ok)
			}
		}
	}
	directives := series(t, n, "jido_directives_total")
	for _, kind := range constValues(t, "../agents/directive.go", "Kind") {
		for _, outcome := range constValues(t, "../agents/runtime/records.go", "Outcome") {
			if v, ok := directives["kind="+kind+",outcome="+outcome]; !ok || v != 0 {
				t.Errorf("jido_directives_total{kind=%q,outcome=%q} = %v (present %v), want 0", kind, outcome, v, ok)
			}
		}
	}
	commits := series(t, n, "jido_commit_seconds")
	for _, typ := range []string{"counter", "calculator", "conversation"} {
		if v, ok := commits["agent_type="+typ]; !ok || v != 0 {
			t.Errorf("jido_commit_seconds{agent_type=%q} count %v (present %v), want 0", typ, v, ok)
		}
	}
}

// TestBuildInfo: jido_build_info says which build runs, at value 1.
func TestBuildInfo(t *testing.T) {
	n, err := Start(context.Background(), Config{DataDir: t.TempDir(), NATS: NATSConfig{Listen: "127.0.0.1:0"}, NoSync: true, Version: "v9.8.7"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown(context.Background())
	got := series(t, n, "jido_build_info")
	if len(got) != 1 {
		t.Fatalf("jido_build_info %v, want one series", got)
	}
	for labels, v := range got {
		want := []string{"version=v9.8.7", "go=" + goruntime.Version(), "log_format=" + strconv.Itoa(eventlog.FormatVersion), "commit="}
		for _, w := range want {
			if !strings.Contains(labels, w) {
				t.Errorf("jido_build_info{%s}: no %s", labels, w)
			}
		}
		if v != 1 {
			t.Errorf("jido_build_info = %v, want 1", v)
		}
	}
}

// TestEveryRefusalIsCountedOnce refuses one input of each kind — at the
// door, by the runtime before and after accepting it, by the node itself,
// an unreadable control-plane request — and finds each counted once in
// jido_signals_refused_total under its reason, each a dead letter, and
// nothing else counted.
func TestEveryRefusalIsCountedOnce(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	ctx := context.Background()
	if _, err := n.Runtime().Start(ctx, runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	request := func(m *nats.Msg) {
		t.Helper()
		r, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(r.Data), `"ok":false`) {
			t.Fatalf("%s: reply %s, want a refusal", m.Subject, r.Data)
		}
	}
	// The door: a CloudEvents version it does not speak.
	request(&nats.Msg{Subject: "jido.agent.c1.counter.increment", Header: nats.Header{
		"ce-specversion": {"0.3"}, "ce-id": {"x1"}, "ce-source": {"t"}, "ce-type": {"counter.increment"},
	}, Data: []byte(`{"by":1}`)})
	// The runtime, before accepting it: no such agent.
	request(&nats.Msg{Subject: "jido.agent.nosuch.counter.increment", Data: []byte(`{"by":1}`)})
	// The node: a transient event for no agent.
	request(&nats.Msg{Subject: "jido.agent.nosuch.conversation.assistant.delta", Data: []byte(`{"text":"hi"}`)})
	// The control plane: a request with a field the verb does not know.
	request(&nats.Msg{Subject: "jido.api.log.show", Data: []byte(`{"strem":"agent/c1"}`)})
	// The runtime, after accepting it: the log refuses it (too large).
	big, err := bus.NewSignal("counter.increment", "test", map[string]int{"by": 1})
	if err != nil {
		t.Fatal(err)
	}
	big.SetExtension("padding", strings.Repeat("x", 128<<10))
	if err := n.Runtime().Cast("c1", big); err != nil {
		t.Fatal(err)
	}

	want := map[string]float64{
		bus.ReasonInvalidSpecVersion: 1,
		bus.ReasonNotFound:           2,
		bus.ReasonInvalidRequest:     1,
		bus.ReasonTooLarge:           1,
	}
	testkit.EventuallyNil(t, fmt.Sprintf("%v counted once each, as refusals and as dead letters", want), func() error {
		refused, dead := series(t, n, "jido_signals_refused_total"), series(t, n, "jido_dead_letters_total")
		var wrong []string
		for labels, v := range refused {
			if v != want[strings.TrimPrefix(labels, "reason=")] {
				wrong = append(wrong, "refused "+labels+"="+strconv.FormatFloat(v, 'g', -1, 64))
			}
		}
		for labels, v := range dead {
			if v != want[strings.TrimPrefix(labels, "reason=")] {
				wrong = append(wrong, "dead letters "+labels+"="+strconv.FormatFloat(v, 'g', -1, 64))
			}
		}
		if len(wrong) != 0 {
			return fmt.Errorf("wrong: %v", wrong)
		}
		return nil
	})
}

// get fetches path from the node's metrics listener.
func get(t *testing.T, n *Node, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + n.metrics.ln.Addr().String() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// pingReady asks jido.api.ping and returns its readiness members.
func pingReady(t *testing.T, n *Node) (bool, map[string]string) {
	t.Helper()
	m, err := n.Conn().Request(n.subjects.Ping(), nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		OK     bool              `json:"ok"`
		Ready  bool              `json:"ready"`
		Checks map[string]string `json:"checks"`
	}
	if err := json.Unmarshal(m.Data, &r); err != nil || !r.OK {
		t.Fatalf("ping %s: %v", m.Data, err)
	}
	return r.Ready, r.Checks
}

// TestHealthAndReadiness: a started node is alive and ready, on the
// metrics listener and in ping.
func TestHealthAndReadiness(t *testing.T) {
	n := startNode(t, t.TempDir())
	defer n.Shutdown(context.Background())
	if code, body := get(t, n, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz %d %s", code, body)
	}
	code, body := get(t, n, "/readyz")
	if code != http.StatusOK || !strings.Contains(body, `"ready":true`) {
		t.Fatalf("/readyz %d %s, want 200 ready", code, body)
	}
	ready, checks := pingReady(t, n)
	if !ready || checks["log"] != "ok" || checks["recovery"] != "ok" || checks["nats"] != "ok" {
		t.Fatalf("ping ready %v checks %v, want ready with log, recovery and nats ok", ready, checks)
	}
}

// TestNotReadyWhileRecovering: until recovery is done the node says so
// (the listener is up before recovery starts, so a long recovery is
// visible).
func TestNotReadyWhileRecovering(t *testing.T) {
	h := &health{}
	r := h.check(nil, nil)
	if r.Ready || r.Checks["recovery"] == "ok" || !contains(r.Failing, "recovery") {
		t.Fatalf("before recovery: %+v, want not ready naming recovery", r)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestNotReadyWhenNATSIsGone: a node on an external NATS server that
// went away stays alive but is not ready, and says NATS is why.
func TestNotReadyWhenNATSIsGone(t *testing.T) {
	srv := natstest.RunServer(t)
	n, err := Start(context.Background(), Config{DataDir: t.TempDir(), NATS: NATSConfig{URL: srv.ClientURL()}, MetricsAddr: "127.0.0.1:0", NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		// NATS may be gone: a second is enough to give up on the drain.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = n.Shutdown(ctx)
	}()
	if code, body := get(t, n, "/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz %d %s before NATS went away", code, body)
	}
	_ = srv.Close()
	testkit.EventuallyNil(t, "/readyz 503 naming nats", func() error {
		code, body := get(t, n, "/readyz")
		if code != http.StatusServiceUnavailable || !strings.Contains(body, `"failing":["nats"]`) {
			return fmt.Errorf("/readyz %d %s", code, body)
		}
		return nil
	})
	if code, body := get(t, n, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz %d %s: the process still serves", code, body)
	}
}

// TestNotReadyWhenTheLogFailed: once the log cannot write, /readyz says
// 503 naming the log (a balancer stops sending it work), /healthz still
// 200 (the process serves; its supervisor restarts it on Failed).
func TestNotReadyWhenTheLogFailed(t *testing.T) {
	fault := &walSyncFault{}
	n, err := Start(context.Background(), Config{
		DataDir: t.TempDir(), NATS: NATSConfig{Listen: "127.0.0.1:0"}, MetricsAddr: "127.0.0.1:0",
		logFS: errorfs.Wrap(vfs.Default, fault),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		// NATS may be gone: a second is enough to give up on the drain.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = n.Shutdown(ctx)
	}()
	defer fault.armed.Store(false)
	ctx := context.Background()
	if _, err := n.Runtime().Start(ctx, runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, n, "/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz %d %s before the failure", code, body)
	}
	fault.armed.Store(true)
	inc, _ := bus.NewSignal("counter.increment", "test", map[string]int{"by": 1})
	if _, err := n.Runtime().Call(ctx, "c1", inc); err == nil {
		t.Fatal("a call on a failing log succeeded")
	}
	<-n.Failed()
	code, body := get(t, n, "/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"failing":["log"]`) || !strings.Contains(body, "no space left") {
		t.Fatalf("/readyz %d %s, want 503 naming the log and why", code, body)
	}
	if code, body := get(t, n, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz %d %s", code, body)
	}
}
