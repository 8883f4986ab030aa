package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/jido-bus/jido-bus/bus"
)

// CallAll delivers sigs to agent id together and waits until each is
// committed (or refused). Queued as one, with nothing between them, they
// are decided in a row and committed in one append — one fsync, shared
// with whatever else the agent's inbox held — unless the log refuses that
// append; then each is committed or refused on its own (batch.go), in
// order. The error joins the errors of the signals that failed, each
// naming its signal; nil means every one is in the log. The replies
// carry no state: a caller that records facts (a tool call's start and
// outcome) has no use for it, and encoding it is most of a reply's cost.
func (rt *Runtime) CallAll(ctx context.Context, id string, sigs ...bus.Signal) error {
	if len(sigs) == 0 {
		return nil
	}
	errs := make(chan error, len(sigs))
	envs := make([]envelope, len(sigs))
	for i, sig := range sigs {
		envs[i] = envelope{sig: sig, joined: len(sigs) - 1 - i, noState: true, reply: func(_ Reply, err error) {
			if err != nil {
				err = fmt.Errorf("signal %s (%s): %w", sig.ID(), sig.Type(), err)
			}
			errs <- err
		}}
	}
	if err := rt.deliverAll(id, envs); err != nil {
		return err
	}
	var failed []error
	for range sigs {
		select {
		case err := <-errs:
			if err != nil {
				failed = append(failed, err)
			}
		case <-ctx.Done():
			return fmt.Errorf("call %s: %w (the signals stay queued and will be decided)", id, ctx.Err())
		}
	}
	return errors.Join(failed...)
}
