package dlq

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/natsbus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// Stream is the log stream every refused input is appended to.
const Stream = "dlq"

// batchSize bounds how many dead letters share one append (and one
// fsync).
const batchSize = 256

// Writer appends dead letters to the log stream "dlq" on a
// goroutine of its own, many to an append, so that a flood of bad input
// costs one fsync per batch and does not hold up the NATS goroutine that
// refused it for an fsync each. Its queue is bounded: when it is full,
// file waits (backpressure on the refusing subscription) rather than drop.
type Writer struct {
	log    *eventlog.Log
	limits bus.Limits // the log's
	logger *slog.Logger
	ch     chan bus.Signal
	done   chan struct{}

	mu     sync.RWMutex
	closed bool
}

// NewWriter returns a Writer appending to log, whose limits are limits,
// running until Close.
func NewWriter(log *eventlog.Log, limits bus.Limits, logger *slog.Logger) *Writer {
	w := &Writer{log: log, limits: limits, logger: logger, ch: make(chan bus.Signal, 4*batchSize), done: make(chan struct{})}
	go w.run()
	return w
}

// File queues a dead letter for the log.
func (w *Writer) File(s bus.Signal) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		w.logger.Error("dead letter after shutdown; not appended to the log", "stream", Stream, "id", s.ID(), "subject", s.Subject())
		return
	}
	w.ch <- s
}

func (w *Writer) run() {
	defer close(w.done)
	batch := make([]bus.Signal, 0, batchSize)
	for s := range w.ch {
		batch = append(batch[:0], s)
	more:
		for len(batch) < batchSize {
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
		w.append(batch)
	}
}

// append appends a batch of dead letters. The log refuses a whole batch
// for one entry it refuses, so when the batch fails each dead letter is
// appended alone (a retry of one that was stored is a duplicate the log
// drops: same source and id), and one the log refuses even alone is
// stored as a stub instead: a dead letter is never lost without a trace.
func (w *Writer) append(batch []bus.Signal) {
	err := w.appendOnce(batch...)
	if err == nil || len(batch) == 1 && bus.ErrorType(err) == bus.ReasonInternal {
		if err != nil {
			w.logger.Error("append dead letter to the log", "stream", Stream, "id", batch[0].ID(), "err", err)
		}
		return
	}
	if len(batch) > 1 {
		w.logger.Warn("append dead letters to the log failed; appending them one by one", "stream", Stream, "count", len(batch), "err", err)
	}
	for _, s := range batch {
		err := w.appendOnce(s)
		if err != nil && bus.ErrorType(err) != bus.ReasonInternal {
			w.logger.Error("the log refuses a dead letter; storing a stub of it", "stream", Stream, "id", s.ID(), "err", err)
			err = w.appendOnce(stub(s, err, w.limits))
		}
		if err != nil {
			w.logger.Error("append dead letter to the log", "stream", Stream, "id", s.ID(), "err", err)
		}
	}
}

func (w *Writer) appendOnce(batch ...bus.Signal) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := w.log.Append(ctx, Stream, eventlog.AnyVersion, batch...)
	return err
}

// stub is what is stored of a dead letter the log refused: its
// id, what it was about (read from its record when it can be), why it
// could not be stored, and the size and sha256 of its record.
func stub(s bus.Signal, refused error, lim bus.Limits) bus.Signal {
	var d natsbus.DeadLetter
	if json.Unmarshal(s.Data(), &d) != nil {
		d = natsbus.DeadLetter{Subject: s.Subject()}
	}
	sum := sha256.Sum256(s.Data())
	stub := natsbus.DeadLetter{
		Reason:    d.Reason,
		Error:     bus.Excerpt(d.Error) + "; the dead letter could not be stored whole: " + bus.Excerpt(bus.AsError(refused).Message),
		Subject:   d.Subject,
		Time:      d.Time,
		Truncated: true,
		Size:      len(s.Data()),
		SHA256:    hex.EncodeToString(sum[:]),
	}
	out := stub.Signal(lim)
	out.SetID(s.ID())
	if bus.ValidateSignal(&out, lim) != nil {
		out.SetTime(time.Now().UTC()) // the one attribute of the stub taken as it was
	}
	return out
}

// Close appends what is queued and stops the writer; dead letters filed
// after it are logged, not appended.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	close(w.ch)
	w.mu.Unlock()
	<-w.done
	return nil
}
