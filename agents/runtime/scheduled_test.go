package runtime

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/agents"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/schemas"
)

// clock is a settable Config.Now.
type clock struct {
	mu sync.Mutex
	at time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.at }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.at = c.at.Add(d); c.mu.Unlock() }

// TestScheduleOfAMessageArrivesAsJidoScheduled: a Schedule of a plain
// message, not a signal, is delivered as a jido.scheduled signal with the
// message in data.message, which the built-in schema accepts. Like any
// schedule it is a durable intention: due while the node was down, it is
// delivered once after the restart, and not again after the next.
func TestScheduleOfAMessageArrivesAsJidoScheduled(t *testing.T) {
	reg, err := schemas.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{at: time.Now()}
	h := newHarness(t, func(cfg *Config) { cfg.Now = clk.now })
	h.start("probe", "p1", Options{})
	h.mustCall("p1", "probe.remind", map[string]any{"ms": time.Hour.Milliseconds(), "name": "tea"})

	clk.advance(2 * time.Hour) // due while the node is down
	h.restart()
	reminders := func() []any { l, _ := h.state("p1")["reminders"].([]any); return l }
	testkit.Eventually(t, "the reminder after the restart", func() bool { return len(reminders()) > 0 })

	h.restart()
	s, err := h.rt.lookup("p1")
	if err != nil {
		t.Fatal(err)
	}
	if st := s.timers.snapshot(); len(st.Awaiting) != 0 {
		t.Fatalf("after the delivery and a second restart, still awaited: %+v", st.Awaiting)
	}
	h.settle("p1")
	if got := reminders(); len(got) != 1 || got[0].(map[string]any)["note"] != "tea" {
		t.Fatalf("reminders %v, want the one message once", got)
	}
	var delivered int
	for e, err := range h.log.ReadStream("agent/p1", eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Event.Type() != agents.TypeScheduled {
			continue
		}
		delivered++
		b, err := json.Marshal(e.Event)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if err := reg.Validate(agents.TypeScheduled, v); err != nil {
			t.Errorf("the delivered %s: %v\n%s", agents.TypeScheduled, err, b)
		}
	}
	if delivered != 1 {
		t.Fatalf("%d %s signals in the stream, want 1", delivered, agents.TypeScheduled)
	}
}
