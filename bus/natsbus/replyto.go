package natsbus

import (
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// checkReplyTo refuses a reply subject the node must not publish on for
// a requester: one in the node's own subject space (<prefix>.>: emits,
// dead letters, the control plane, signals) or a system subject ($JS,
// $SYS, $KV, …). The node answers with its own rights, so such a reply
// subject would let a client whose role may not publish there (forged
// emits, JetStream assets) have the node do it. Inboxes (_INBOX.…, the
// roles' _INBOX_<user>.…) and any other subject are answered.
func (b *Bus) checkReplyTo(msg *nats.Msg) error {
	r := msg.Reply
	if r == "" {
		return nil
	}
	prefix := strings.TrimSuffix(b.opts.Subjects.Ping(), ".api.ping")
	if strings.HasPrefix(r, "$") || r == prefix || strings.HasPrefix(r, prefix+".") {
		return bus.Errorf(bus.ReasonForbidden, "reply subject %q of a message on %s is the node's own subject space (%s.>) or a system subject ($…): the node does not publish there for anyone; reply to an inbox (_INBOX.…), as request clients do", r, msg.Subject, prefix)
	}
	return nil
}

// refuseUnanswered refuses msg, whose reply subject is not to be
// published on (checkReplyTo), without answering it: counted and
// dead-lettered like any refusal.
func (b *Bus) refuseUnanswered(msg *nats.Msg, err error) {
	b.refuse(&nats.Msg{Subject: msg.Subject, Header: msg.Header, Data: msg.Data}, err)
}
