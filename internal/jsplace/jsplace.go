// Package jsplace waits for JetStream servers that cannot yet place a
// replicated stream: the log's partitions, the cluster's bucket and the
// emit stream are made the first time a node starts, often just as the
// servers form their cluster.
package jsplace

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// jsErrCodeNoPeers is the servers' "no suitable peers for placement"
// (JSClusterNoPeersErr); nats.go names no constant for it.
const jsErrCodeNoPeers jetstream.ErrorCode = 10005

// Patience is how long a creation waits for servers that cannot yet
// place a replicated stream or bucket. A cluster that has just formed
// answers "no suitable peers" until its meta leader has heard every
// server's statistics, a few seconds at most; a cluster with too few
// servers answers it for ever.
const Patience = 15 * time.Second

// Retry calls create until it returns anything but "no suitable peers for
// placement", for at most Patience or until ctx ends. When the servers
// still cannot place, the error says what to check.
func Retry(ctx context.Context, replicas int, create func() error) error {
	deadline := time.Now().Add(Patience)
	wait := 50 * time.Millisecond
	var unplaced error // the servers' last "no suitable peers"
	for {
		err := create()
		if !IsNoPeers(err) {
			if unplaced != nil && ctx.Err() != nil {
				// The wait ended during a request: what the servers last
				// said is the news, not the deadline.
				return explain(unplaced, replicas, "when the wait ended ("+ctx.Err().Error()+")")
			}
			return err
		}
		unplaced = err
		if time.Until(deadline) < wait {
			return explain(err, replicas, fmt.Sprintf("after %v", Patience))
		}
		select {
		case <-ctx.Done():
			return explain(err, replicas, "when the wait ended ("+ctx.Err().Error()+")")
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

func explain(err error, replicas int, when string) error {
	return fmt.Errorf("%w, still %s: a cluster that has just formed answers this until its servers have heard of each other, and one with fewer than %d JetStream servers online answers it for ever (check with nats server report jetstream)",
		err, when, replicas)
}

// IsNoPeers says whether err is the servers' "no suitable peers for
// placement".
func IsNoPeers(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jsErrCodeNoPeers
}
