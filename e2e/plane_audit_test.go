package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsserver/natstest"
	"github.com/jido-bus/jido-bus/internal/testkit"
)

// metricValue returns the value of the sample `series` (name and labels,
// exactly as exposed) on the node's /metrics, or -1 when there is none.
func metricValue(t *testing.T, base, series string) float64 {
	t.Helper()
	_, body := httpGet(t, base+"/metrics")
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return -1
}

// dlqSubjects returns the subjects of the dead letters in the log stream
// dlq, by reason, as log.show reads them.
func dlqSubjects(t *testing.T, node *Node) map[string][]string {
	t.Helper()
	var page struct {
		OK      bool `json:"ok"`
		Entries []struct {
			Event struct {
				Data struct {
					Reason  string `json:"reason"`
					Subject string `json:"subject"`
				} `json:"data"`
			} `json:"event"`
		} `json:"entries"`
	}
	out := node.NATS(t, "req", "--raw", "jido.api.log.show", `{"stream":"dlq"}`)
	if err := json.Unmarshal([]byte(out), &page); err != nil || !page.OK {
		if strings.Contains(out, "not_found") {
			return map[string][]string{}
		}
		t.Fatalf("log.show dlq: %v %s", err, out)
	}
	got := map[string][]string{}
	for _, e := range page.Entries {
		got[e.Event.Data.Reason] = append(got[e.Event.Data.Reason], e.Event.Data.Subject)
	}
	return got
}

// TestPlaneRequestWithoutReplyIsNotDone: `nats pub jido.api.log.truncate`
// — a request with no reply subject — used to truncate the stream with no
// one told and nothing recorded. It is refused: the stream is whole, the
// refusal is a dead letter naming the subject, counted once.
func TestPlaneRequestWithoutReplyIsNotDone(t *testing.T) {
	node := StartNode(t, tools, t.TempDir(), "--metrics", "127.0.0.1:0")
	base := metricsBase(t, node)
	tools.Run(t, "agent", "start", "counter", "--id", "c1", "--nats-url", node.URL)
	for range 3 {
		tools.Run(t, "agent", "call", "c1", "counter.increment", `{"by":1}`, "--nats-url", node.URL)
	}
	node.NATS(t, "pub", "jido.api.log.truncate", `{"stream":"agent/c1","before":4}`)
	var dl map[string][]string
	testkit.Eventually(t, "the dead letter of the request without a reply subject", func() bool {
		dl = dlqSubjects(t, node)
		return len(dl[bus.ReasonInvalidRequest]) > 0
	})
	if got := dl[bus.ReasonInvalidRequest]; len(got) != 1 || got[0] != "jido.api.log.truncate" {
		t.Fatalf("dead letters %v, want one invalid_request for jido.api.log.truncate", dl)
	}
	var first struct {
		Streams []struct {
			Stream string `json:"stream"`
			First  uint64 `json:"first"`
		} `json:"streams"`
	}
	if err := json.Unmarshal([]byte(node.NATS(t, "req", "--raw", "jido.api.log.streams", `{"prefix":"agent/c1"}`)), &first); err != nil {
		t.Fatal(err)
	}
	if len(first.Streams) != 1 || first.Streams[0].First != 1 {
		t.Fatalf("agent/c1 after a truncate published without a reply subject: %+v, want it whole (first 1)", first.Streams)
	}
	if v := metricValue(t, base, `jido_signals_refused_total{reason="invalid_request"}`); v != 1 {
		t.Fatalf("jido_signals_refused_total{invalid_request} = %v, want 1", v)
	}
}

// TestPlaneRefusalsCountedOncePerArea: an unreadable request to one verb
// of every control-plane area — log, projection, conv, agent, project,
// ping — is answered
// invalid_request, dead-lettered once naming its subject, and counted
// once in jido_signals_refused_total and jido_dead_letters_total.
func TestPlaneRefusalsCountedOncePerArea(t *testing.T) {
	node := StartNode(t, tools, t.TempDir(), "--metrics", "127.0.0.1:0")
	base := metricsBase(t, node)
	subjects := []string{
		"jido.api.ping", "jido.api.log.show", "jido.api.log.truncate", "jido.api.projection.get",
		"jido.api.conv.show", "jido.api.conv.send", "jido.api.conv.approve", "jido.api.agent.state",
		"jido.api.agent.await", "jido.api.project.get", "jido.api.conv.start",
	}
	bodies := []string{`{"no_such_field":1}`, `[1]`, `"x"`, `{"a":1} {}`}
	for i, s := range subjects {
		body := bodies[i%len(bodies)]
		if got := errorType(reply(t, node.NATS(t, "req", "--raw", s, body))); got != bus.ReasonInvalidRequest {
			t.Errorf("%s %s: %q, want %s", s, body, got, bus.ReasonInvalidRequest)
		}
	}
	want := float64(len(subjects))
	testkit.Eventually(t, "every refusal counted", func() bool {
		return metricValue(t, base, `jido_dead_letters_total{reason="invalid_request"}`) >= want
	})
	for _, series := range []string{`jido_signals_refused_total{reason="invalid_request"}`, `jido_dead_letters_total{reason="invalid_request"}`} {
		if v := metricValue(t, base, series); v != want {
			t.Errorf("%s = %v, want %v (each refusal once)", series, v, want)
		}
	}
	var dl map[string][]string
	testkit.Eventually(t, "every dead letter in the dlq stream", func() bool {
		dl = dlqSubjects(t, node)
		return len(dl[bus.ReasonInvalidRequest]) >= len(subjects)
	})
	if got := fmt.Sprint(dl[bus.ReasonInvalidRequest]); got != fmt.Sprint(subjects) {
		t.Fatalf("dead letters %s, want one per subject, in order: %v", got, subjects)
	}
}

// TestPlaneTwoNodesOneNATS: nodes share one external NATS server only
// under prefixes of their own. A second node on the prefix of a running
// one would take every signal too — each has its own log and agents — and
// answer calls to the first one's agents not_found, dead-lettering what
// the first acknowledged; it is refused at start, saying what to do.
// Under another prefix it runs beside the first, each answering its own.
// A node on the data dir of a running one is refused too.
func TestPlaneTwoNodesOneNATS(t *testing.T) {
	srv := natstest.RunServer(t)
	dirA := t.TempDir()
	a := StartNode(t, tools, dirA, "--nats-url", srv.ClientURL(), "--metrics", "127.0.0.1:0")
	tools.Run(t, "agent", "start", "counter", "--id", "c1", "--nats-url", a.URL)

	r := runCLI(t, nil, "serve", "--nats-url", srv.ClientURL(), "--data-dir", t.TempDir())
	if r.code != 1 || !strings.Contains(r.stderr, "already serves --prefix jido") || !strings.Contains(r.stderr, "its own --prefix") {
		t.Fatalf("a second node on prefix jido: exit %d, %s; want it refused naming the prefix and what to do", r.code, r.stderr)
	}
	b := StartNode(t, tools, t.TempDir(), "--nats-url", srv.ClientURL(), "--prefix", "other")
	// Every call to c1 is answered by the node that runs it.
	for i := range 10 {
		out := a.NATS(t, "req", "--raw", "jido.agent.c1.counter.increment", `{"by":1}`)
		if rep := reply(t, out); rep["ok"] != true {
			t.Fatalf("call %d to c1 with a node under another prefix beside: %s", i, out)
		}
	}
	if got := errorType(reply(t, b.NATS(t, "req", "--raw", "other.api.agent.state", `{"id":"c1"}`))); got != bus.ReasonNotFound {
		t.Fatalf("node B's agent.state c1: %q, want not_found (c1 runs on node A)", got)
	}

	r = runCLI(t, nil, "serve", "--nats-url", srv.ClientURL(), "--prefix", "third", "--data-dir", dirA)
	if r.code != 1 || !strings.Contains(r.stderr, "in use by another jido-bus process") {
		t.Fatalf("a node on %s, in use: exit %d, %s; want it refused naming the data dir in use", dirA, r.code, r.stderr)
	}
	if code, _ := httpGet(t, metricsBase(t, a)+"/readyz"); code != http.StatusOK {
		t.Fatalf("node A's /readyz after the refused starts: %d", code)
	}
}

// TestPlaneReplySubjectIsNoWayAroundRoles: a client may not publish on
// jido.emit.> (the NATS CLI shows the violation), but it may name any
// reply subject; a request or a call whose reply subject is jido.emit.…
// would have the node publish its answer there, a forged emit of the
// victim agent for every subscriber. The node refuses it (forbidden, a
// dead letter) and publishes nothing there; no signal is committed.
func TestPlaneReplySubjectIsNoWayAroundRoles(t *testing.T) {
	node := startSecured(t, "--metrics", "127.0.0.1:0")
	base := metricsBase(t, node)
	if out, err := natsAs(t, node, "boss", adminPW, "req", "--raw", "jido.api.agent.start", `{"type":"counter","id":"c1"}`); err != nil || !strings.Contains(out, `"ok":true`) {
		t.Fatalf("admin start: %v %s", err, out)
	}
	if out, _ := natsAs(t, node, "app", clientPW, "pub", "jido.emit.victim.payment.approved", "{}"); !strings.Contains(out, "Permissions Violation") {
		t.Fatalf("a client publishing on jido.emit.>: %s, want a permissions violation", out)
	}
	emits, _ := node.StartNATS(t, "--user", "boss", "--password", adminPW, "sub", "jido.emit.victim.>")
	testkit.Eventually(t, "the admin's subscription", func() bool { return strings.Contains(emits.String(), "Subscribing on") })
	for _, subject := range []string{"jido.api.ping", "jido.agent.c1.counter.increment"} {
		if out, err := natsAs(t, node, "app", clientPW, "pub", subject, `{"by":1}`, "--reply", "jido.emit.victim.payment.approved"); err != nil {
			t.Fatalf("client pub %s: %v %s", subject, err, out)
		}
	}
	// The permissions violation above and the two requests.
	testkit.Eventually(t, "the three refusals counted", func() bool {
		return metricValue(t, base, `jido_signals_refused_total{reason="forbidden"}`) >= 3
	})
	if out, err := natsAs(t, node, "app", clientPW, "req", "--raw", "jido.api.agent.state", `{"id":"c1"}`); err != nil || !strings.Contains(out, `"version":0`) {
		t.Fatalf("c1 after a call with a forbidden reply subject: %v %s, want version 0 (nothing committed)", err, out)
	}
	// A marker published after all that reaches the subscription after
	// anything the node had sent there.
	if out, err := natsAs(t, node, "boss", adminPW, "pub", "jido.emit.victim.marker", "MARKER"); err != nil {
		t.Fatalf("admin pub: %v %s", err, out)
	}
	testkit.Eventually(t, "the marker", func() bool { return strings.Contains(emits.String(), "MARKER") })
	if got := emits.String(); strings.Contains(got, `"ok"`) {
		t.Fatalf("the node published on jido.emit.victim.payment.approved for a client:\n%s", got)
	}
	if v := metricValue(t, base, `jido_dead_letters_total{reason="forbidden"}`); v != 3 {
		t.Fatalf("forbidden dead letters = %v, want 3 (the violation and the two requests)", v)
	}
}

// TestPlaneBadInputCountedOnce: a request that reads but breaks a grammar
// — an agent id, a pattern, a signal type — is refused like an unreadable
// one: answered with its reason, a dead letter, counted once (not once by
// the control plane and again by the runtime).
func TestPlaneBadInputCountedOnce(t *testing.T) {
	node := StartNode(t, tools, t.TempDir(), "--metrics", "127.0.0.1:0")
	base := metricsBase(t, node)
	tools.Run(t, "agent", "start", "counter", "--id", "c1", "--nats-url", node.URL)
	cases := []struct{ subject, body, reason string }{
		{"jido.api.agent.start", `{"type":"counter","id":"bad..id"}`, bus.ReasonInvalidAgentID},
		{"jido.api.log.show", `{"types":"**.**"}`, bus.ReasonInvalidPattern},
		{"jido.api.agent.call", `{"id":"c1","type":"bad type!"}`, bus.ReasonInvalidType},
		{"jido.api.agent.cast", `{"id":"c1","type":"bad type!"}`, bus.ReasonInvalidType},
	}
	want := map[string]float64{}
	for _, c := range cases {
		if got := errorType(reply(t, node.NATS(t, "req", "--raw", c.subject, c.body))); got != c.reason {
			t.Errorf("%s %s: %q, want %s", c.subject, c.body, got, c.reason)
		}
		want[c.reason]++
	}
	testkit.Eventually(t, "every refusal filed", func() bool {
		n := 0
		for _, subjects := range dlqSubjects(t, node) {
			n += len(subjects)
		}
		return n >= len(cases)
	})
	for reason, n := range want {
		for _, series := range []string{"jido_signals_refused_total", "jido_dead_letters_total"} {
			if v := metricValue(t, base, series+`{reason="`+reason+`"}`); v != n {
				t.Errorf("%s{%s} = %v, want %v", series, reason, v, n)
			}
		}
	}
}
