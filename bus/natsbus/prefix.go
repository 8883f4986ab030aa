package natsbus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// prefixProbeTimeout bounds the wait for an answer to the start's ping. A
// server with no subscriber answers "no responders" at once; the timeout
// only runs when something subscribes and does not answer.
const prefixProbeTimeout = 2 * time.Second

// CheckPrefixFree refuses to start a node where another already answers
// on the prefix. Each node keeps its own log and agents, and signals are
// not partitioned between nodes yet: both would take every signal, so a
// call to an agent of one would be answered not_found by the other and
// its acknowledged signals dead-lettered there. (Two nodes starting at
// the same moment both pass; the control plane's queue group still has
// one of them answer each request.) No answer in time, or a probe the
// server does not allow, is taken as "free": the check guards against a
// mistake, it is not a lock.
func CheckPrefixFree(ctx context.Context, nc *nats.Conn, subjects bus.Subjects, url string) error {
	ctx, cancel := context.WithTimeout(ctx, prefixProbeTimeout)
	defer cancel()
	_, err := nc.RequestWithContext(ctx, subjects.Ping(), nil)
	if err != nil {
		if !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("ask whether a jido-bus node already serves %s at %s: %w", subjects.Ping(), url, err)
		}
		return nil
	}
	return fmt.Errorf("a jido-bus node already serves --prefix %s at %s: two nodes on one prefix would each take the other's signals "+
		"(a call answered not_found by the node that does not run the agent); stop that node, or give this one its own --prefix",
		subjects.Name(), url)
}
