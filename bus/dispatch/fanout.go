package dispatch

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jido-bus/jido-bus/bus"
)

// fanout sends each signal to every one of its targets concurrently, so a
// slow webhook does not delay the NATS publish beside it, and waits for all
// of them: one target failing does not keep the others from being tried.
type fanout struct {
	targets []Dispatcher
	names   []string // "[i] kind", to say which target failed
}

func newFanout(cfgs []Config, env Env) (Dispatcher, error) {
	f := &fanout{}
	for i, c := range cfgs {
		d, err := build(c, env)
		if err != nil {
			return nil, fmt.Errorf("dispatch target [%d]: %w", i, err)
		}
		f.targets = append(f.targets, d)
		name := "list"
		if c.Targets == nil {
			name = string(c.kind())
		}
		f.names = append(f.names, fmt.Sprintf("[%d] %s", i, name))
	}
	if len(f.targets) == 1 {
		return f.targets[0], nil
	}
	return f, nil
}

// Dispatch returns nil when every target succeeded, otherwise the
// errors.Join of the failures, each prefixed with the target's position and
// kind ("dispatch target [1] webhook: …"); errors.Is and errors.As see
// through it.
func (f *fanout) Dispatch(ctx context.Context, from string, s *bus.Signal) error {
	errs := make([]error, len(f.targets))
	panics := make([]any, len(f.targets))
	var wg sync.WaitGroup
	for i, d := range f.targets {
		wg.Go(func() {
			defer func() { panics[i] = recover() }()
			if err := d.Dispatch(ctx, from, s); err != nil {
				errs[i] = fmt.Errorf("dispatch target %s: %w", f.names[i], err)
			}
		})
	}
	wg.Wait()
	// A panic is raised again in the caller's goroutine, where its recovery
	// policy (the agent runtime's supervisor) can see it; in a goroutine of
	// ours it would end the process.
	for _, p := range panics {
		if p != nil {
			panic(p)
		}
	}
	return errors.Join(errs...)
}
