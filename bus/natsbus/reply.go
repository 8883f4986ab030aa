package natsbus

import (
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// checkReply refuses a request whose reply subject the bus must not
// publish on. The bus answers with its connection's rights, which are the
// node's (everything), while NATS lets a publisher name any reply subject
// it likes, whatever its own permissions: without this check a client
// that may only call agents could make the node publish its answer on an
// agent's emit subject (forging what the agent emits to subscribers), on
// a dead-letter or control-plane subject, or on JetStream's API
// ($JS.API.STREAM.PURGE.<stream>) — a confused deputy. So a reply subject
// under the node's prefix or starting with '$' (NATS's own APIs) is
// refused; with Options.InboxReplies only an inbox is accepted.
//
// A refused request is not handled and its reply subject is cleared
// before the refusal is filed, so that not even the error is published
// there.
func (b *Bus) checkReply(msg *nats.Msg) error {
	reply := msg.Reply
	if reply == "" {
		return nil
	}
	prefix := b.opts.Subjects.Name()
	inbox := strings.HasPrefix(reply, "_INBOX.") || strings.HasPrefix(reply, "_INBOX_")
	switch {
	case reply == prefix, strings.HasPrefix(reply, prefix+"."), strings.HasPrefix(reply, "$"):
	case b.opts.InboxReplies && !inbox:
	default:
		return nil
	}
	msg.Reply = ""
	return bus.Errorf(bus.ReasonForbidden, "reply subject %q: the node answers on an inbox only (_INBOX.… or _INBOX_<user>.…), never on its own subjects (%s.>), NATS's $-subjects or another application's, where it would publish with its own rights for the requester", reply, prefix)
}
