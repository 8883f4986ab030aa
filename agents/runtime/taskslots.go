package runtime

import (
	"context"
	"slices"
	"sync"
)

// DefaultMaxTasks is Config.MaxTasks' default: the seed's task
// supervisor (max_children: 1000).
const DefaultMaxTasks = 1000

// taskSlots bounds the tasks running at once on a runtime
// (Config.MaxTasks). A task over the bound waits for a slot, in the order
// the tasks asked, and is never refused: its RunInstruction is already
// committed, so refusing it would only turn a durable intention into an
// error the agent never asked for. The wait is bounded too. An agent's
// queue loop waits for its own task's slot before it runs the agent's
// next directive, so the agent's queue fills and, past its
// max_queue_size, new signals are refused with queue_overflow before
// anything is committed — the explicit rejection, a dead letter, that
// every overload gets. Only tasks brought back by recovery wait without
// holding a loop: they are already in the log, however many there are.
type taskSlots struct {
	mu      sync.Mutex
	free    int
	waiting []*taskWaiter // in the order the tasks asked
}

// taskWaiter is a task waiting for a slot.
type taskWaiter struct {
	start func()        // starts the task, which then holds the slot
	done  chan struct{} // closed once start was called or the wait given up
	stop  func() bool   // withdraws the give-up on ctx's end
	// settled is set, under taskSlots.mu, by whichever of a slot and
	// ctx's end comes first.
	settled bool
}

func newTaskSlots(n int) *taskSlots { return &taskSlots{free: n} }

// admit calls start once a slot is free, at once when one is and no task
// waits before it. The channel it returns is closed when start has been
// called, or when ctx ended first (start is then never called). The slot
// start was given is given back with release.
func (l *taskSlots) admit(ctx context.Context, start func()) <-chan struct{} {
	w := &taskWaiter{start: start, done: make(chan struct{})}
	l.mu.Lock()
	if l.free > 0 && len(l.waiting) == 0 {
		l.free--
		w.settled = true
		l.mu.Unlock()
		start()
		close(w.done)
		return w.done
	}
	l.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { l.giveUp(w) })
	l.mu.Lock()
	w.stop = stop
	if !w.settled { // ctx may have ended already
		l.waiting = append(l.waiting, w)
	}
	l.mu.Unlock()
	return w.done
}

// giveUp withdraws w, whose context ended before it got a slot.
func (l *taskSlots) giveUp(w *taskWaiter) {
	l.mu.Lock()
	if w.settled {
		l.mu.Unlock()
		return
	}
	w.settled = true
	l.waiting = slices.DeleteFunc(l.waiting, func(o *taskWaiter) bool { return o == w })
	l.mu.Unlock()
	close(w.done)
}

// release gives a slot back: to the first task waiting, or to the pool.
func (l *taskSlots) release() {
	l.mu.Lock()
	for len(l.waiting) > 0 {
		w := l.waiting[0]
		l.waiting[0] = nil
		l.waiting = l.waiting[1:]
		if w.settled {
			continue
		}
		w.settled = true
		l.mu.Unlock()
		w.stop()
		w.start()
		close(w.done)
		return
	}
	l.free++
	l.mu.Unlock()
}

// counts returns the slots in use and the tasks waiting, for Counts.
func (l *taskSlots) counts(max int) (running, waiting int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return max - l.free, len(l.waiting)
}
