package dispatch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/bus"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runNATS starts an embedded NATS server on a random local port and
// returns a connection to it; both are shut down when tb ends.
func runNATS(tb testing.TB) *nats.Conn {
	tb.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		tb.Fatalf("new NATS server: %v", err)
	}
	go s.Start()
	tb.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	if !s.ReadyForConnections(10 * time.Second) {
		tb.Fatal("NATS server not ready in 10s")
	}
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		tb.Fatalf("connect to NATS: %v", err)
	}
	tb.Cleanup(nc.Close) // runs before the server's cleanup
	return nc
}

// testSignal returns a valid signal with data, a time and an extension.
func testSignal(tb testing.TB, typ string) bus.Signal {
	tb.Helper()
	s, err := bus.NewSignal(typ, "/agents/c1", map[string]any{"count": 3, "note": "naïve \"quoted\" 100%"})
	if err != nil {
		tb.Fatalf("new signal: %v", err)
	}
	s.SetID("01JTEST0000000000000000001")
	s.SetTime(time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC))
	s.SetExtension(bus.ExtCorrelationID, "corr-1")
	return s
}

// fakeClock is a Clock whose Sleep returns at once and records what it was
// asked to wait, so retry tests take no real time and assert on delays
// rather than on the wall clock.
type fakeClock struct {
	now time.Time

	mu      sync.Mutex
	sleeps  []time.Duration
	onSleep func() // called inside Sleep before it returns; may cancel a context
}

var _ Clock = (*fakeClock)(nil)

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	hook := c.onSleep
	c.mu.Unlock()
	if hook != nil {
		hook()
	}
	return ctx.Err()
}

func (c *fakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}
