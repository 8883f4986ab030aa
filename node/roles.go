package node

import (
	"github.com/jido-bus/jido-bus/agents/runtime/agentapi"
	"github.com/jido-bus/jido-bus/agents/runtime/emitapi"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/bus/emitstream"
	"github.com/jido-bus/jido-bus/bus/natsserver"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
	"github.com/jido-bus/jido-bus/projections/projectionapi"
	"github.com/jido-bus/jido-bus/projects/projectapi"
	"github.com/jido-bus/jido-bus/projects/toolservice"
)

// The roles of the embedded server's users (natsserver's role model; the
// node says which of its verbs each reaches, in RolePermissions).
const (
	RoleAdmin       = natsserver.RoleAdmin
	RoleOperator    = natsserver.RoleOperator
	RoleClient      = natsserver.RoleClient
	RoleToolService = natsserver.RoleToolService
)

// Roles lists the roles (natsserver.Roles).
func Roles() []string { return natsserver.Roles() }

// InboxPrefix is the inbox prefix a user must use (natsserver.InboxPrefix).
func InboxPrefix(user string) string { return natsserver.InboxPrefix(user) }

// RolePermissions returns the NATS permissions of role for user under
// subjects' prefix; nil for an admin (no restriction).
func RolePermissions(role string, subjects bus.Subjects, user string) (*natsserver.Permissions, error) {
	api := subjects.API
	g := natsserver.Grants{
		Client: []string{
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
		ClientSubscribe: []string{subjects.All(bus.KindEmit)},
		// What agents emitted, from the emit stream: what a service that
		// was down reads to catch up, with any JetStream client.
		EmitStream: emitstream.Name(subjects),
		Operator: []string{
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
		},
		OperatorSubscribe: []string{
			subjects.All("dlq"),
			// An operator may answer a project's hooks: a hook decides
			// which tool calls run and with which arguments, which is an
			// operator's to say, never a client's. One reply per request
			// received.
			subjects.All(bus.KindHook),
		},
		OperatorResponsesFor: maxHookResponse,
		ToolService:          func(user string) *natsserver.Permissions { return toolservice.Permissions(subjects, user) },
	}
	// A client looks at projects; opening, closing, reloading and tool
	// calls (which write files and run programs) are an operator's.
	for _, verb := range projectapi.ReadVerbs() {
		g.Client = append(g.Client, api(projectapi.Area, verb))
	}
	// The project area's conversation verbs of the release before
	// answer where they went (convapi.MovedVerbs); a client reaches the
	// answer for those it could send.
	g.Client = append(g.Client, api(projectapi.Area, "conv.start"), api(projectapi.Area, "conv.ls"))
	return g.Permissions(role, user)
}
