package runtime

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// flushPace is how long the flusher waits after a flush before the next
// one, so that under load one round trip to the NATS server confirms the
// emits of many agents.
const flushPace = time.Millisecond

// emitFlusher confirms that what agents published on the runtime's NATS
// connection has reached the server. An emit's outcome may be recorded as
// done only then: until the server has it, it sits in this client's buffer
// and dies with the process.
//
// It counts generations. An agent reads the current generation after it
// published (mark); the flusher advances the generation, then flushes, so
// once that flush returns every mark of the generations before is
// confirmed (confirmed). Flushes run on the flusher's goroutine, at most
// one per flushPace, each confirming everything marked before it began —
// one round trip for all agents instead of one per agent per signal.
type emitFlusher struct {
	nc *nats.Conn // nil: nothing to flush, every mark is confirmed

	gen  atomic.Uint64 // the generation marks read now; starts at 1
	done atomic.Uint64 // every generation ≤ done is confirmed
	kick chan struct{}

	mu      sync.Mutex
	flushed chan struct{} // closed after each flush attempt, then replaced
	err     error         // the last flush's error
}

func newEmitFlusher(nc *nats.Conn) *emitFlusher {
	f := &emitFlusher{nc: nc, kick: make(chan struct{}, 1), flushed: make(chan struct{})}
	f.gen.Store(1)
	return f
}

// mark returns the generation of what the caller published so far, and
// asks for a flush.
func (f *emitFlusher) mark() uint64 {
	if f.nc == nil {
		return 0
	}
	g := f.gen.Load()
	select {
	case f.kick <- struct{}{}:
	default:
	}
	return g
}

// confirmed reports whether what was published before mark returned g has
// reached the server.
func (f *emitFlusher) confirmed(g uint64) bool { return g <= f.done.Load() }

// wait returns once generation g is confirmed, or with the error of the
// flush that should have confirmed it, or when ctx ends.
func (f *emitFlusher) wait(ctx context.Context, g uint64) error {
	for !f.confirmed(g) {
		f.mu.Lock()
		ch := f.flushed
		f.mu.Unlock()
		select {
		case f.kick <- struct{}{}:
		default:
		}
		select {
		case <-ch:
			f.mu.Lock()
			err := f.err
			f.mu.Unlock()
			if err != nil && !f.confirmed(g) {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// run flushes when asked, until ctx ends.
func (f *emitFlusher) run(ctx context.Context) {
	if f.nc == nil {
		return
	}
	pace := time.NewTimer(0)
	defer pace.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.kick:
		}
		g := f.gen.Add(1) - 1
		err := f.nc.FlushTimeout(flushTimeout)
		if err == nil {
			f.done.Store(g)
		}
		f.mu.Lock()
		f.err = err
		close(f.flushed)
		f.flushed = make(chan struct{})
		f.mu.Unlock()
		pace.Reset(flushPace)
		select {
		case <-ctx.Done():
			return
		case <-pace.C:
		}
	}
}
