package runtime

import (
	"context"
	"log/slog"
	"time"
)

// Owner takes and gives up a cluster's partitions for a runtime and the
// input that feeds it: the membership's OnAcquire and OnRelease.
type Owner struct {
	Runtime *Runtime
	// Input starts and stops taking a partition's input (natsbus.Bus).
	Input interface {
		ServePartition(p int) error
		StopPartition(p int)
	}
	Logger *slog.Logger
}

// releaseTimeout bounds how long a partition given up waits for its
// agents to commit what they had accepted.
const releaseTimeout = 10 * time.Second

// Acquire brings partition p back from the log (its agents, their
// pending directives and timers) before its input is taken.
func (o Owner) Acquire(ctx context.Context, p int, epoch uint64) error {
	agents, err := o.Runtime.Acquire(ctx, p)
	if err != nil {
		_ = o.Runtime.Release(ctx, p)
		return err
	}
	if err := o.Input.ServePartition(p); err != nil {
		_ = o.Runtime.Release(ctx, p)
		return err
	}
	o.Logger.Info("partition acquired", "partition", p, "epoch", epoch, "agents", agents)
	return nil
}

// Release stops taking partition p's input, then lets its agents finish
// what they had: committed when the partition is handed over, refused
// when the lease was lost or ran out (another node may be deciding for p
// already, so their senders retry there). A commit of this node's that
// passed the log's fence would leave its directives to a new owner that
// read the agent before it.
func (o Owner) Release(p int, handingOver bool) {
	o.Input.StopPartition(p)
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if !handingOver {
		cancel()
	}
	if err := o.Runtime.Release(ctx, p); err != nil && ctx.Err() == nil {
		o.Logger.Error("release partition", "partition", p, "err", err)
	}
}
