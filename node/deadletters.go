package node

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/codec"
	"github.com/jido-bus/jido-bus/eventlog"
)

// DeadLetterStream is the log stream every refused input is appended to.
const DeadLetterStream = "dlq"

// deadLetterBatch bounds how many dead letters share one append (and one
// fsync).
const deadLetterBatch = 256

// deadLetterRefused files a signal agent agentID accepted and then
// refused (runtime.Config.OnRefused) as a dead letter, as if the bus had
// refused it on arrival: on <prefix>.dlq.<reason> and in the stream dlq.
func (n *Node) deadLetterRefused(agentID string, sig *bus.Signal, err error) {
	msg, encErr := codec.Encode(n.subjects.Agent(agentID, sig.Type()), sig, codec.Binary)
	if encErr != nil {
		n.log.Error("dead letter of a refused signal not filed", "agent", agentID, "signal", sig.ID(), "reason", bus.ErrorType(err), "err", encErr)
		return
	}
	n.bus.DeadLetter(msg, err)
}

// deadLetterWriter appends dead letters to the log stream "dlq" on a
// goroutine of its own, many to an append, so that a flood of bad input
// costs one fsync per batch and does not hold up the NATS goroutine that
// refused it for an fsync each. Its queue is bounded: when it is full,
// file waits (backpressure on the refusing subscription) rather than drop.
type deadLetterWriter struct {
	log    *eventlog.Log
	logger *slog.Logger
	ch     chan bus.Signal
	done   chan struct{}

	mu     sync.RWMutex
	closed bool
}

func newDeadLetterWriter(log *eventlog.Log, logger *slog.Logger) *deadLetterWriter {
	w := &deadLetterWriter{log: log, logger: logger, ch: make(chan bus.Signal, 4*deadLetterBatch), done: make(chan struct{})}
	go w.run()
	return w
}

// file queues a dead letter for the log.
func (w *deadLetterWriter) file(s bus.Signal) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		w.logger.Error("dead letter after shutdown; not appended to the log", "stream", DeadLetterStream, "id", s.ID(), "subject", s.Subject())
		return
	}
	w.ch <- s
}

func (w *deadLetterWriter) run() {
	defer close(w.done)
	batch := make([]bus.Signal, 0, deadLetterBatch)
	for s := range w.ch {
		batch = append(batch[:0], s)
	more:
		for len(batch) < deadLetterBatch {
			select {
			case next, ok := <-w.ch:
				if !ok {
					break more
				}
				batch = append(batch, next)
			default:
				break more
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if _, err := w.log.Append(ctx, DeadLetterStream, eventlog.AnyVersion, batch...); err != nil {
			w.logger.Error("append dead letters to the log", "stream", DeadLetterStream, "count", len(batch), "err", err)
		}
		cancel()
	}
}

// close appends what is queued and stops the writer.
func (w *deadLetterWriter) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	close(w.ch)
	w.mu.Unlock()
	<-w.done
}
