package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
)

// A follower (log tail -f, conv follow, top) runs until interrupted, so it
// outlives node restarts the way `nats sub` does: its connection reconnects
// for ever, says on stderr when it lost the node and when it is back, and
// the follower resumes from the last position it printed, so that nothing
// is printed twice or skipped.

// followReconnectWait is the pause between two attempts to reach the node
// again.
const followReconnectWait = 250 * time.Millisecond

// followerOptions are the NATS options of a follower's connection: reconnect
// for ever, tell w (stderr) about it, and buffer nothing while
// disconnected, so a request then fails at once and is asked again after
// the reconnect instead of reaching the node late.
// Closing the connection also calls the disconnect handler: a closed
// connection was not lost, and says nothing.
func (f *connFlags) followerOptions(w io.Writer, what string) []nats.Option {
	url := func() string { return f.url }
	// refused is the last authorization error said, so that a node that
	// refuses the follower's credentials is said once, not every attempt.
	var (
		mu      sync.Mutex
		refused string
	)
	// A node back with other credentials is said on stderr (connect's
	// error handler calls onAuthError) and tried again for ever: nats.go
	// would give up after the second refusal and leave the follower on a
	// closed connection, polling in silence. It resumes once the node
	// accepts it again.
	f.onAuthError = func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if err.Error() == refused {
			return
		}
		refused = err.Error()
		fmt.Fprintf(w, "jido-bus %s: authorization failed at %s (%v): the node refuses these credentials now; still trying (Ctrl-C to stop)\n", what, url(), err)
	}
	return []nats.Option{
		nats.MaxReconnects(-1),
		nats.IgnoreAuthErrorAbort(),
		nats.ReconnectWait(followReconnectWait),
		nats.ReconnectBufSize(-1),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if nc.IsClosed() {
				return
			}
			reason := ""
			if err != nil {
				reason = " (" + err.Error() + ")"
			}
			fmt.Fprintf(w, "jido-bus %s: lost the node at %s%s; reconnecting…\n", what, url(), reason)
		}),
		// nats.go's ConnectedUrlRedacted shows a token URL's token.
		nats.ReconnectHandler(func(nc *nats.Conn) {
			if nc.IsClosed() {
				return
			}
			mu.Lock()
			refused = ""
			mu.Unlock()
			fmt.Fprintf(w, "jido-bus %s: reconnected to %s\n", what, redactURL(nc.ConnectedUrl()))
		}),
	}
}

// syncWriter serialises writes to w: the connection's handlers write to
// stderr from their own goroutine.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// transient reports whether err, from a request to a node, may pass once
// the node is back: the connection is down or reconnecting, nothing
// answers yet (the node is starting), the answer did not come in time, or
// the node is shutting down.
func transient(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, logapi.ErrNoServer) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, nats.ErrReconnectBufExceeded) ||
		errors.Is(err, nats.ErrDisconnected) || errors.Is(err, nats.ErrStaleConnection) ||
		bus.ErrorType(err) == bus.ReasonUnavailable
}
