package main

import (
	"context"
	"io"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projections"
	"github.com/jido-bus/jido-bus/projections/projectionapi"
)

// projectionsDir is where the projection store (Pebble) lives inside a
// data directory, beside the log.
func projectionsDir(dataDir string) string { return node.ProjectionsDir(dataDir) }

// projectionBackend is what the projection subcommands need: a running
// server's API (projectionapi.Client) or the data directory opened in this
// process (projectionapi.Local).
type projectionBackend interface {
	List(context.Context, projectionapi.ListRequest) (projectionapi.ListReply, error)
	Get(context.Context, projectionapi.GetRequest) (projections.State, error)
	Rebuild(context.Context, projectionapi.RebuildRequest) (projectionapi.RebuildReply, error)
}

// convBackend is what the conv subcommands that read the read models
// need: a running node's conv API (convapi.Client) or the data directory
// opened in this process (convapi.Reader, which cannot fork).
type convBackend interface {
	List(context.Context, convapi.ListRequest) (convapi.ListReply, error)
	Show(context.Context, convapi.ShowRequest) (convapi.ShowReply, error)
	Fork(context.Context, convapi.ForkRequest) (convapi.ForkReply, error)
}

var (
	_ projectionBackend = projectionapi.Client{}
	_ projectionBackend = projectionapi.Local{}
	_ convBackend       = convapi.Client{}
	_ convBackend       = convapi.Reader{}
)

// openedProjections is both backends, and for a data directory opened
// here the runner, so that commands can fold what the log holds before
// reading.
type openedProjections struct {
	projectionBackend
	conv   convBackend
	runner *projections.Runner // nil for a running node
	close  func()
}

// openProjections opens what the command reads (openSource): the log
// and the projection store in the data directory, or a running node's
// API. Offline, the projections are not folded yet: callers run catchUp
// (or a rebuild) first.
func (f *logFlags) openProjections(ctx context.Context) (*openedProjections, error) {
	opts := []nats.Option{nats.Timeout(connectTimeout), nats.NoReconnect(), nats.Name("jido-bus projection")}
	src, err := f.openSource(ctx, opts, false, func(probe context.Context, nc *nats.Conn, subjects bus.Subjects) error {
		_, err := projectionapi.Client{NC: nc, Subjects: subjects, Timeout: f.timeout, Denials: f.denials}.List(probe, projectionapi.ListRequest{})
		return err
	})
	if err != nil {
		return nil, err
	}
	if nc := src.nc; nc != nil {
		client := projectionapi.Client{NC: nc, Subjects: src.subjects, Timeout: f.timeout, Denials: f.denials}
		conv := convapi.Client{NC: nc, Subjects: src.subjects, Timeout: f.timeout, Denials: f.denials}
		return &openedProjections{projectionBackend: client, conv: conv, close: nc.Close}, nil
	}
	l := src.log
	store, err := projections.OpenStore(projectionsDir(f.dataDir), projections.StoreOptions{})
	if err != nil {
		_ = l.Close()
		return nil, err
	}
	r, err := projections.NewRunner(l, store, projections.Options{}, views.Projections(views.Options{})...)
	if err != nil {
		_ = store.Close()
		_ = l.Close()
		return nil, err
	}
	return &openedProjections{
		projectionBackend: projectionapi.Local{Runner: r},
		conv:              convapi.Reader{Runner: r, Log: l},
		runner:            r,
		close: func() {
			_ = store.Close()
			_ = l.Close()
		},
	}, nil
}

// withProjections is how a projection or conv command reads: it opens
// the projections (openProjections), folds what the log holds into them
// first when fold is set (catchUp: offline only, a node follows its log),
// runs use and closes them.
func (f *logFlags) withProjections(cmd *cobra.Command, fold bool, use func(context.Context, *openedProjections) error) error {
	ctx := cmd.Context()
	b, err := f.openProjections(ctx)
	if err != nil {
		return err
	}
	defer b.close()
	if fold {
		if err := b.catchUp(ctx, cmd.OutOrStdout()); err != nil {
			return err
		}
	}
	return use(ctx, b)
}

// catchUp folds what the log holds into the projections of an opened data
// directory, drawing a progress bar on a terminal; for a running node it
// does nothing (the node follows its log).
func (o *openedProjections) catchUp(ctx context.Context, out io.Writer) error {
	if o.runner == nil {
		return nil
	}
	var bar progress
	started := false
	err := o.runner.CatchUp(ctx, func(p projections.Progress) {
		if !started {
			bar = newProgress(out, int64(p.Target), "folding the log")
			started = true
		}
		bar.set(int64(p.Position))
	})
	bar.finish()
	return err
}
