package bench

import (
	"sync"
	"time"
)

// progressInterval is how often a running step reports how far it got.
const progressInterval = 200 * time.Millisecond

// progressSink serialises calls to Config.Progress.
type progressSink struct {
	mu sync.Mutex
	fn func(Progress)
}

func (p *progressSink) send(pr Progress) {
	if p == nil || p.fn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fn(pr)
}

// step reports a measured step of the scenario: now and then how far done
// says it got, and once more when the returned stop is called. The
// reporting goroutine belongs to the step and ends in stop.
func (e *Env) step(name string, total int64, done func() int64) (stop func()) {
	sink := e.progress
	report := func(finished bool) {
		sink.send(Progress{Scenario: e.scenario, Step: name, Done: done(), Total: total, Finished: finished})
	}
	report(false)
	if sink == nil || sink.fn == nil {
		return func() {}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				report(false)
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			wg.Wait()
			report(true)
		})
	}
}
