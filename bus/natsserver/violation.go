package natsserver

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Violation is a message the server refused by permission: a client
// published (or requested) on a subject its user may not publish to.
// nats-server tells the client (an -ERR "Permissions Violation" it shows as
// an error) and drops the message; Options.OnViolation hears of it too, so
// that the refusal is recorded where operators look, not only in the
// refused client.
type Violation struct {
	// Subject is the subject refused, or the reply subject for a reply
	// violation (Reply is then true).
	Subject string
	Reply   bool
	// Subscribe: the client subscribed to Subject (a queue subscription
	// too) and the server refused it. Nothing was published.
	Subscribe bool
	// User is the configured name of the client's user ("" when the
	// server's log line named none, e.g. a token).
	User string
	// Client is nats-server's description of the connection: address,
	// connection id, client name, account and user.
	Client string
}

// nats-server (client.go, pubPermissionViolation and replySubjectViolation)
// logs a refused publish as Errorf(c.format("Publish Violation - Subject %q"),
// subject), the format prefixed with the client's description
// `ADDR - cid:N - "version:lang:name" - "$G/user:NAME"`. There is no other
// hook: the server's message tracing and advisories do not carry these.
const (
	publishViolation = " - Publish Violation - Subject %q"
	replyViolation   = " - Publish Violation - Reply %q"
)

// A refused subscription is logged differently (client.go,
// subPermissionViolation): Errorf(ADDR… - Subscription Violation - Subject
// %q[, Queue: %q], SID N), already formatted, with no arguments.
var subscribeViolation = regexp.MustCompile(`^(.*) - Subscription Violation - Subject ("(?:[^"\\]|\\.)*")(?:, Queue: "(?:[^"\\]|\\.)*")?, SID \S+$`)

// violation recognises a refused publish or subscription among the
// server's error lines.
func (o *Options) violation(format string, v []any) (Violation, bool) {
	var x Violation
	if m := subscribeViolation.FindStringSubmatch(format); m != nil && len(v) == 0 {
		subject, err := strconv.Unquote(m[2])
		if err != nil {
			return Violation{}, false
		}
		x.Client, x.Subject, x.Subscribe = m[1], subject, true
		x.User = o.userOf(x.Client)
		return x, true
	}
	switch {
	case strings.HasSuffix(format, publishViolation):
		x.Client = strings.TrimSuffix(format, publishViolation)
	case strings.HasSuffix(format, replyViolation):
		x.Client, x.Reply = strings.TrimSuffix(format, replyViolation), true
	default:
		return Violation{}, false
	}
	if len(v) != 1 {
		return Violation{}, false
	}
	x.Subject = fmt.Sprintf("%s", v[0]) // a []byte in nats-server
	x.User = o.userOf(x.Client)
	return x, true
}

// userOf reads the user out of a client description: its last part, when
// it is a quoted "ACCOUNT/user:NAME" or "ACCOUNT/nkey:KEY". It is quoted
// with %q by the server, so a client name cannot forge it: a quote in the
// name is escaped, and the user part, when there is one, comes last.
func (o *Options) userOf(client string) string {
	i := strings.LastIndex(client, ` - "`)
	if i < 0 {
		return ""
	}
	label, err := strconv.Unquote(client[i+3:])
	if err != nil {
		return ""
	}
	_, who, ok := strings.Cut(label, "/")
	if !ok {
		return ""
	}
	switch kind, id, _ := strings.Cut(who, ":"); kind {
	case "user":
		return id
	case "nkey":
		if name, ok := o.nkeyNames()[id]; ok {
			return name
		}
		return id
	}
	return ""
}
