package node

import (
	"fmt"

	"github.com/jido-bus/jido-bus/agents/runtime/agentapi"
	"github.com/jido-bus/jido-bus/agents/runtime/emitapi"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/emitstream"
	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
	"github.com/jido-bus/jido-bus/projections/projectionapi"
	"github.com/jido-bus/jido-bus/projects/projectapi"
)

// The roles a user of the embedded server has. Each is a set of NATS
// permissions built from the node's prefix, enforced by the server itself:
// a message a role does not allow never reaches the node.
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
	// projects (tool_services.go): it announces and withdraws them on
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

// RolePermissions returns the NATS permissions of role for user under
// subjects' prefix; nil for an admin (no restriction).
func RolePermissions(role string, subjects bus.Subjects, user string) (*natsserver.Permissions, error) {
	api := subjects.API
	client := &natsserver.Permissions{
		PublishAllow: []string{
			subjects.All(bus.KindAgent),
			subjects.All(bus.KindSignal),
			subjects.Ping(),
			api("agent", agentapi.VerbCall),
			api("agent", agentapi.VerbCast),
			api("agent", agentapi.VerbState),
			api("agent", agentapi.VerbWhereis),
			api("agent", agentapi.VerbList),
			api("agent", agentapi.VerbAwait),
			// What an agent emitted on its own emit subjects, from the
			// log: the events a client may subscribe to live, so that a
			// subscriber that was away catches up without a gap.
			api(emitapi.Area, emitapi.Verb),
			api(convapi.Area, convapi.VerbSend),
			// A client that may send to a conversation may stop its turn
			// and answer its approvals: both only steer the turn it
			// started, through the project's policy.
			api(convapi.Area, convapi.VerbCancel),
			api(convapi.Area, convapi.VerbApprove),
			// And compact it between turns, as it could by sending more:
			// a summary of its own conversation, by the project's model.
			api(convapi.Area, convapi.VerbCompact),
			// Not conv.mode: a client chooses a mode at conv.start (it
			// could start in auto anyway); changing a running
			// conversation's mode would lift a plan an operator set.
			api(convapi.Area, convapi.VerbList),
			api(convapi.Area, convapi.VerbShow),
			// A client starts a conversation in a project, as conv send
			// already starts one on its first message: its model and tool
			// calls go through the project's policy either way. Stopping
			// one ends it for good (its id is never used again), like
			// agent stop, and forking one starts another: an operator's.
			api(convapi.Area, convapi.VerbStart),
			api(projectionapi.AreaProjection, projectionapi.VerbList),
			api(projectionapi.AreaProjection, projectionapi.VerbGet),
		},
		SubscribeAllow: []string{subjects.All(bus.KindEmit), InboxPrefix(user) + ".>"},
	}
	// What agents emitted, from the emit stream: what a service that was
	// down reads to catch up, with any JetStream client.
	client.PublishAllow = append(client.PublishAllow, emitStreamReader(emitstream.Name(subjects))...)
	// A client looks at projects; opening, closing, reloading and tool
	// calls (which write files and run programs) are an operator's.
	for _, verb := range projectapi.ReadVerbs() {
		client.PublishAllow = append(client.PublishAllow, api(projectapi.Area, verb))
	}
	// The project area's conversation verbs of the release before
	// answer where they went (convapi.MovedVerbs); a client reaches the
	// answer for those it could send.
	client.PublishAllow = append(client.PublishAllow, api(projectapi.Area, "conv.start"), api(projectapi.Area, "conv.ls"))
	switch role {
	case RoleAdmin:
		return nil, nil
	case RoleToolService:
		return toolServicePermissions(subjects, user), nil
	case RoleClient:
		return client, nil
	case RoleOperator:
		op := client
		op.PublishAllow = append(op.PublishAllow,
			api("agent", "*"),
			api("log", logapi.VerbStreams),
			api("log", logapi.VerbShow),
			api("log", logapi.VerbTail),
			api("log", logapi.VerbExport),
			api("log", logapi.VerbVerify),
			api(projectionapi.AreaProjection, "*"),
			api(convapi.Area, "*"),
			// ">": tool.call is two tokens.
			api(projectapi.Area, ">"),
		)
		op.PublishAllow = append(op.PublishAllow, jetStreamReadOnly...)
		op.SubscribeAllow = append(op.SubscribeAllow, subjects.All("dlq"))
		// An operator may answer a project's hooks: a hook decides which
		// tool calls run and with which arguments, which is an operator's
		// to say, never a client's. One reply per request received.
		op.SubscribeAllow = append(op.SubscribeAllow, subjects.All(bus.KindHook))
		op.ResponsesFor = maxHookResponse
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
