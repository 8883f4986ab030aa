// Package goroutines gives a component one owner for the goroutines it
// starts: a Group starts them, refuses to once it is told to stop, and
// waits for them. It is nats-server's startGoRoutine as a type: no
// component pairs sync.WaitGroup.Add and Done by hand, and none can start
// a goroutine that its shutdown's wait would not see.
package goroutines

import "sync"

// Group owns goroutines. The zero value is ready; a Group must not be
// copied after first use. Its methods may be called concurrently, Go
// from a goroutine of the group too.
type Group struct {
	mu      sync.Mutex
	stopped bool
	wg      sync.WaitGroup
}

// Go runs f on a goroutine the group owns and reports true, or starts
// nothing and reports false once Wait has been called: a goroutine
// started then would outlive the wait meant to end them all. A caller
// whose f was refused undoes what it prepared for f.
func (g *Group) Go(f func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return false
	}
	g.wg.Go(f)
	return true
}

// Wait refuses every later Go and returns once the goroutines the group
// started have ended. What ends them (a context cancelled, a channel
// closed) is the caller's to have done before.
func (g *Group) Wait() {
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
	g.wg.Wait()
}
