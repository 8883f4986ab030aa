package natsserver

import (
	"fmt"
	"slices"
	"time"
)

// The roles a user of the embedded server has. Each is a set of NATS
// permissions, enforced by the server itself: a message a role does not
// allow never reaches the node. Grants says which subjects each may use.
const (
	// RoleAdmin may do everything, JetStream and the log's mutating
	// verbs (truncate, import) included.
	RoleAdmin = "admin"
	// RoleOperator is a client that also controls agents (start, stop)
	// and projects (open, close, reload, tool calls), stops and forks
	// conversations, reads the log (streams, show, tail, export, verify),
	// rebuilds projections, reads dead letters and reads
	// JetStream's state; it creates and deletes nothing in JetStream and
	// cannot truncate or import.
	RoleOperator = "operator"
	// RoleClient sends signals (<prefix>.agent.>, <prefix>.signal.>),
	// calls and casts through the API, reads agent and conversation state,
	// sends to conversations (and cancels their turns, answers their
	// tool approvals), lists and reads projects (ls, get, tools,
	// assets, diagnostics), starts and lists conversations (conv.start,
	// conv.ls, conv.show), subscribes to what agents emit and reads it
	// back from the log (log.emits: the same events, with their
	// positions, and nothing else of the log).
	RoleClient = "client"
	// RoleToolService is a program that offers tools to the node's
	// projects (projects/toolservice): it announces and withdraws them on
	// <prefix>.tools.announce and .withdraw, hears calls on
	// <prefix>.tools.call.<its user name>.> only (not another service's),
	// and answers each once. It reads nothing of the node and calls no
	// verb: the tools it offers are its only way in, and they run under
	// each project's policy.
	RoleToolService = "toolservice"
)

// Roles lists the roles: client, operator and admin, each allowed what the
// one before it is and more, then toolservice, allowed only its own. A new
// slice each time, so no caller can change what another sees.
func Roles() []string { return []string{RoleClient, RoleOperator, RoleAdmin, RoleToolService} }

// InboxPrefix is the inbox prefix a user must use (nats.CustomInboxPrefix,
// the NATS CLI's --inbox-prefix): every role but admin may subscribe to
// its own inbox only, so that no client reads another's replies.
func InboxPrefix(user string) string { return "_INBOX_" + user }

// Grants are the subjects of the node's own verbs and events each role
// may use; the role model adds what NATS itself needs (the user's inbox,
// JetStream's API).
type Grants struct {
	// Client and Operator are what a client may publish to, and what an
	// operator may besides.
	Client, Operator []string
	// ClientSubscribe and OperatorSubscribe are what a client may
	// subscribe to besides its inbox, and what an operator may besides.
	ClientSubscribe, OperatorSubscribe []string
	// OperatorResponsesFor lets an operator answer the requests it hears
	// on OperatorSubscribe (Permissions.ResponsesFor).
	OperatorResponsesFor time.Duration
	// EmitStream is the JetStream stream a client may read through pull
	// consumers of its own.
	EmitStream string
	// ToolService returns a tool service's permissions for user.
	ToolService func(user string) *Permissions
}

// Permissions returns the NATS permissions of role for user; nil for an
// admin (no restriction).
func (g Grants) Permissions(role, user string) (*Permissions, error) {
	client := &Permissions{
		PublishAllow:   append(slices.Clone(g.Client), emitStreamReader(g.EmitStream)...),
		SubscribeAllow: append(slices.Clone(g.ClientSubscribe), InboxPrefix(user)+".>"),
	}
	switch role {
	case RoleAdmin:
		return nil, nil
	case RoleToolService:
		return g.ToolService(user), nil
	case RoleClient:
		return client, nil
	case RoleOperator:
		op := client
		op.PublishAllow = append(op.PublishAllow, g.Operator...)
		op.PublishAllow = append(op.PublishAllow, jetStreamReadOnly...)
		op.SubscribeAllow = append(op.SubscribeAllow, g.OperatorSubscribe...)
		op.ResponsesFor = g.OperatorResponsesFor
		return op, nil
	}
	return nil, fmt.Errorf("role %q of user %q: want one of %v", role, user, Roles())
}

// emitStreamReader are the JetStream API subjects a client needs to read
// the emit stream through a pull consumer of its own, ephemeral or named
// (`nats consumer add --pull`, `nats consumer next`, nats.go's
// jetstream.Stream.CreateOrUpdateConsumer and Consumer.Fetch, Messages,
// Consume): the stream's info, creating a consumer and reading its info,
// asking for the next messages (they come on the client's inbox), and
// acknowledging them. Deleting or purging the stream, removing its
// messages, deleting a consumer (another service's position) and every
// other stream stay with admins.
func emitStreamReader(stream string) []string {
	return []string{
		"$JS.API.STREAM.INFO." + stream,
		"$JS.API.CONSUMER.CREATE." + stream,        // ephemeral, as clients before nats-server 2.9 ask
		"$JS.API.CONSUMER.CREATE." + stream + ".>", // named: .<consumer> or .<consumer>.<filter>
		"$JS.API.CONSUMER.INFO." + stream + ".*",
		"$JS.API.CONSUMER.MSG.NEXT." + stream + ".*",
		"$JS.ACK." + stream + ".>",
	}
}

// jetStreamReadOnly are the JetStream API subjects that only read: account
// info, stream and consumer names, lists and info (`nats stream ls`,
// `nats stream info`). Creating, updating, deleting and purging stay with
// admins.
var jetStreamReadOnly = []string{
	"$JS.API.INFO",
	"$JS.API.STREAM.NAMES",
	"$JS.API.STREAM.LIST",
	"$JS.API.STREAM.INFO.*",
	"$JS.API.CONSUMER.NAMES.*",
	"$JS.API.CONSUMER.LIST.*",
	"$JS.API.CONSUMER.INFO.*.*",
}
