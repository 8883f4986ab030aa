package projectionapi

import (
	"context"
	"errors"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/projections"
)

// Local runs the operations in this process. It is safe for concurrent
// use, as the Runner is.
type Local struct {
	Runner *projections.Runner
}

// List returns every projection's status.
func (c Local) List(context.Context, ListRequest) (ListReply, error) {
	return ListReply{Projections: c.Runner.Status()}, nil
}

// Get returns one key's state, current or at a past position.
func (c Local) Get(ctx context.Context, req GetRequest) (projections.State, error) {
	if req.Name == "" {
		return projections.State{}, bus.Errorf(bus.ReasonInvalidRequest, "get needs a projection name")
	}
	if req.At != (projections.Until{}) {
		return wrap(c.Runner.At(ctx, req.Name, req.Key, req.At))
	}
	return wrap(c.Runner.Get(req.Name, req.Key))
}

// Rebuild requests a rebuild.
func (c Local) Rebuild(_ context.Context, req RebuildRequest) (RebuildReply, error) {
	if err := c.Runner.Rebuild(req.Name); err != nil {
		return RebuildReply{}, asNotFound(err)
	}
	for _, st := range c.Runner.Status() {
		if st.Name == req.Name {
			return RebuildReply{Status: st}, nil
		}
	}
	return RebuildReply{}, nil
}

func wrap(st projections.State, err error) (projections.State, error) {
	return st, asNotFound(err)
}

// asNotFound gives not-found errors the not_found type word for replies.
func asNotFound(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, projections.ErrNotFound) || errors.Is(err, eventlog.ErrNotFound) {
		return bus.Errorf(bus.ReasonNotFound, "%v", err)
	}
	return err
}
