package natsbus

import (
	"errors"
	"regexp"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// Denials turns the permissions violations a NATS server reports on a
// connection into forbidden errors for the requests they concern. The
// server reports a refused publish only asynchronously, to the
// connection's error handler, and otherwise the request would simply time
// out; install Handle as that handler (nats.ErrorHandler(d.Handle)) and
// give the Requester the same Denials.
//
// The zero value is ready to use; it is safe for concurrent use.
type Denials struct {
	// User names the connection's user in the messages; empty: "this
	// connection's user".
	User string
	// Next, if set, also receives every error (Handle passes them on).
	Next nats.ErrHandler

	mu      sync.Mutex
	waiters map[*denialWaiter]struct{}
}

type denialWaiter struct {
	subject string
	ch      chan error // buffered 1; written at most once
}

var (
	publishDeniedRe   = regexp.MustCompile(`(?i)publish to "([^"]+)"`)
	subscribeDeniedRe = regexp.MustCompile(`(?i)subscription to "([^"]+)"`)
)

// Handle is a nats.ErrHandler: it fails the pending requests a permissions
// violation concerns (a publish to their subject, or the subscription of
// the reply inbox they all share) and passes every error on to Next.
func (d *Denials) Handle(nc *nats.Conn, sub *nats.Subscription, err error) {
	if errors.Is(err, nats.ErrPermissionViolation) {
		d.deny(nc, err.Error())
	}
	if d.Next != nil {
		d.Next(nc, sub, err)
	}
}

func (d *Denials) deny(nc *nats.Conn, text string) {
	user := d.User
	if user == "" {
		user = "this connection's user"
	} else {
		user = "user " + user
	}
	if m := publishDeniedRe.FindStringSubmatch(text); m != nil {
		d.notify(func(subject string) error {
			if subject != m[1] {
				return nil
			}
			return bus.Errorf(bus.ReasonForbidden, "%s may not publish to %s: its role does not allow %s", user, subject, verbOf(subject))
		})
		return
	}
	if m := subscribeDeniedRe.FindStringSubmatch(text); m != nil && isInbox(nc, m[1]) {
		// Every request's reply comes through this one subscription.
		d.notify(func(subject string) error {
			return bus.Errorf(bus.ReasonForbidden, "%s may not subscribe to its reply inbox %s, so it cannot receive the answer on %s: allow it to subscribe to _INBOX.> (or set an inbox prefix it may use)", user, m[1], subject)
		})
	}
}

// notify sends errFor(subject), when not nil, to each waiter.
func (d *Denials) notify(errFor func(subject string) error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for w := range d.waiters {
		if err := errFor(w.subject); err != nil {
			select {
			case w.ch <- err:
			default: // already denied once
			}
		}
	}
}

// watch registers a request on subject until stop is called.
func (d *Denials) watch(subject string) (<-chan error, func()) {
	w := &denialWaiter{subject: subject, ch: make(chan error, 1)}
	d.mu.Lock()
	if d.waiters == nil {
		d.waiters = make(map[*denialWaiter]struct{})
	}
	d.waiters[w] = struct{}{}
	d.mu.Unlock()
	return w.ch, func() {
		d.mu.Lock()
		delete(d.waiters, w)
		d.mu.Unlock()
	}
}

// isInbox reports whether subject is under the connection's inbox prefix.
func isInbox(nc *nats.Conn, subject string) bool {
	prefix := nats.InboxPrefix
	if nc != nil && nc.Opts.InboxPrefix != "" {
		prefix = nc.Opts.InboxPrefix + "."
	}
	return strings.HasPrefix(subject, prefix)
}

// verbOf names what a subject asks for, for a person: "agent.stop" for
// <prefix>.api.agent.stop, "ping" for <prefix>.api.ping, the subject
// itself otherwise.
func verbOf(subject string) string {
	if _, after, ok := strings.Cut(subject, ".api."); ok {
		return after
	}
	return subject
}
