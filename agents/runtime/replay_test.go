package runtime

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/eventlog"
)

func TestReplayVerifiesAndStopsAtAVersion(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c1", Options{SnapshotEvery: 2})
	for i := 1; i <= 5; i++ {
		h.mustCall("c1", "counter.increment", map[string]int{"by": i})
	}
	entries := h.log.ReadStream("agent/c1", eventlog.ReadOptions{})
	res, err := Replay(entries, h.cfg.Types, h.cfg.Directives, ReplayOptions{Verify: true})
	if err != nil || res.Divergence != nil || res.Version != 5 || !strings.Contains(string(res.State), `"count":15`) {
		t.Fatalf("replay = %+v, %v", res, err)
	}
	var seen []uint64
	res, err = Replay(h.log.ReadStream("agent/c1", eventlog.ReadOptions{}), h.cfg.Types, h.cfg.Directives,
		ReplayOptions{To: 3, OnVersion: func(v uint64, _ json.RawMessage) { seen = append(seen, v) }})
	if err != nil || res.Version != 3 || !strings.Contains(string(res.State), `"count":6`) || len(seen) != 3 {
		t.Fatalf("replay to 3 = %+v %v, versions %v", res, err, seen)
	}
}

// TestReplayFindsANonDeterministicAction: the same log replayed by an
// agent type whose action now decides differently shows where.
func TestReplayFindsANonDeterministicAction(t *testing.T) {
	h := newHarness(t)
	h.start("counter", "c1", Options{})
	for range 3 {
		h.mustCall("c1", "counter.increment", nil)
	}
	// A "counter" whose increment now adds 2: the decisions diverge at once.
	spec := counterSpecAdding(2)
	changed := agents.NewRegistry()
	if err := changed.Register(agents.MustDefine(spec)); err != nil {
		t.Fatal(err)
	}
	res, err := Replay(h.log.ReadStream("agent/c1", eventlog.ReadOptions{}), changed, nil, ReplayOptions{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Divergence
	if d == nil || d.Version != 1 || d.Seq != 3 || !strings.Contains(string(d.Expected), `"count":1`) || !strings.Contains(string(d.Got), `"count":2`) {
		t.Fatalf("divergence = %+v", d)
	}
}

func counterSpecAdding(n float64) agents.Spec {
	return agents.Spec{
		Name:   "counter",
		Schema: `{"type":"object","properties":{"count":{"type":"number","default":0}}}`,
		Actions: []agents.Action{{Name: "increment", Run: func(env agents.Env, _ json.RawMessage) (agents.Result, error) {
			count := env.State.Number("count") + n
			emit, err := agents.NewEmit("counter.changed", map[string]float64{"count": count})
			return agents.Result{Ops: []agents.StateOp{agents.SetPath{Path: []string{"count"}, Value: count}}, Directives: []agents.Directive{emit}}, err
		}}},
		Routes: []agents.Route{{Pattern: "counter.increment", Action: "increment"}},
	}
}
