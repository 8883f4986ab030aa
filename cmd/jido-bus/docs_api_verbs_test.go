package main

import (
	"strings"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/agents/runtime/agentapi"
	"github.com/jido-bus/jido-bus/agents/runtime/emitapi"
	"github.com/jido-bus/jido-bus/conversation"
	"github.com/jido-bus/jido-bus/conversation/convapi"
	"github.com/jido-bus/jido-bus/conversation/views"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/eventlog/logapi"
	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projections"
	"github.com/jido-bus/jido-bus/projections/projectionapi"
	"github.com/jido-bus/jido-bus/projects/projectapi"
)

// movedNote says where a verb of an earlier release went.
func movedNote(to string) string {
	return "Moved to [`jido.api." + to + "`](#" + slug("jido.api."+to) + "): answers every request `ok:false` with an error of type `moved` that names the new subject, for one release."
}

// apiVerbs is the control plane as docs/api.md describes it, area by area.
var apiVerbs = []apiVerb{
	{area: "", verb: "ping", rep: node.PingReply{},
		note: "The node's health and counters (`jido-bus top` polls it). A node whose log failed answers `ok:false`: it takes no input."},

	{area: "agent", verb: agentapi.VerbStart, req: runtime.StartRequest{}, rep: runtime.Info{}},
	{area: "agent", verb: agentapi.VerbStop, req: agentapi.IDRequest{}, rep: agentapi.IDReply{}},
	{area: "agent", verb: agentapi.VerbCall, req: agentapi.SignalRequest{}, rep: runtime.Reply{}},
	{area: "agent", verb: agentapi.VerbCast, req: agentapi.SignalRequest{}, rep: agentapi.IDReply{},
		note: "Queues the signal and answers with its id at once; the agent handles it later (`await` waits for an agent that completes)."},
	{area: "agent", verb: agentapi.VerbState, req: agentapi.IDRequest{}, rep: runtime.Info{}},
	{area: "agent", verb: agentapi.VerbWhereis, req: agentapi.IDRequest{}, rep: agentapi.WhereisReply{}},
	{area: "agent", verb: agentapi.VerbList, req: agentapi.ListRequest{}, rep: agentapi.ListReply{},
		note: "Each member of `agents` is an agent described as [`agent.state`](#jidoapiagentstate) answers."},
	{area: "agent", verb: agentapi.VerbAwait, req: agentapi.AwaitRequest{}, rep: runtime.Info{}},

	{area: "log", verb: logapi.VerbStreams, req: logapi.StreamsRequest{}, rep: logapi.StreamsReply{}},
	{area: "log", verb: logapi.VerbShow, req: logapi.ReadRequest{}, rep: logapi.ReadReply{}},
	{area: "log", verb: logapi.VerbTail, req: logapi.ReadRequest{}, rep: logapi.ReadReply{},
		note: "The same as `show`, under another name (the CLI's `log tail` and `log export` use `show`)."},
	{area: "log", verb: logapi.VerbExport, req: logapi.ReadRequest{}, rep: logapi.ReadReply{},
		note: "The same as `show`, under another name."},
	{area: emitapi.Area, verb: emitapi.Verb, req: runtime.EmitsRequest{}, rep: runtime.EmitsPage{},
		note: "What agents published on their own `<prefix>.emit.<id>.<type>` subjects, read from the log with each emit's position (`after` is a position such as `\"12.1\"`: stream sequences with a stream, global ones without). An emit whose directive failed, or that was dropped when its agent stopped, is left out; one whose outcome is not recorded yet is `unconfirmed`."},
	{area: "log", verb: logapi.VerbImport, req: logapi.ImportRequest{}, rep: logapi.ImportReply{}},
	{area: "log", verb: logapi.VerbVerify, req: logapi.VerifyRequest{}, rep: eventlog.VerifyReport{},
		note: "Reads the whole log (on a snapshot: appends go on); one at a time, a second is refused with `queue_overflow`."},
	{area: "log", verb: logapi.VerbTruncate, req: logapi.TruncateRequest{}, rep: logapi.TruncateReply{}},

	{area: projectionapi.AreaProjection, verb: projectionapi.VerbList, req: projectionapi.ListRequest{}, rep: projectionapi.ListReply{}},
	{area: projectionapi.AreaProjection, verb: projectionapi.VerbGet, req: projectionapi.GetRequest{}, rep: projections.State{}},
	{area: projectionapi.AreaProjection, verb: projectionapi.VerbRebuild, req: projectionapi.RebuildRequest{}, rep: projectionapi.RebuildReply{}},

	{area: convapi.Area, verb: convapi.VerbStart, req: convapi.StartRequest{}, rep: convapi.Info{}},
	{area: convapi.Area, verb: convapi.VerbStop, req: convapi.StopRequest{}, rep: convapi.StopReply{}},
	{area: convapi.Area, verb: convapi.VerbList, req: convapi.ListRequest{}, rep: convapi.ListReply{}},
	{area: convapi.Area, verb: convapi.VerbShow, req: convapi.ShowRequest{}, rep: convapi.ShowReply{},
		note: "`view` is one of `" + strings.Join(views.Views(), "`, `") + "` (the first is the default); `state` is that read model as JSON."},
	{area: convapi.Area, verb: convapi.VerbFork, req: convapi.ForkRequest{}, rep: convapi.ForkReply{}},
	{area: convapi.Area, verb: convapi.VerbSend, req: convapi.SendRequest{}, rep: convapi.Reply{},
		note: "Appends a user message, starting the conversation in its open project when it does not run yet."},
	{area: convapi.Area, verb: convapi.VerbCancel, req: convapi.CancelRequest{}, rep: convapi.Reply{}},
	{area: convapi.Area, verb: convapi.VerbApprove, req: convapi.ApproveRequest{}, rep: convapi.Reply{},
		note: "`decision` is `approve` or `deny`; `remember: \"" + conversation.RememberConversation + "\"` with an approval approves the tool for the rest of the conversation."},
	{area: convapi.Area, verb: convapi.VerbMode, req: convapi.ModeRequest{}, rep: convapi.Reply{},
		note: "`mode` is `plan` (read-only: no tool that writes files or runs programs, by its safety declaration, runs), `ask` (a person approves each such call) or `auto` (the project's policy as it is); it holds for the tool calls started after it, and no mode is looser than the policy. An operator's: a client may choose the mode at conv.start only."},
	{area: convapi.Area, verb: convapi.VerbCompact, req: convapi.CompactRequest{}, rep: convapi.Reply{},
		note: "Between turns: the conversation's model summarises its older messages (conversation.compacted) and every later call sends the system prompt, the task, the summary and the recent messages. A conversation in a turn, or being compacted, is refused `conflict`; one driven from outside `invalid_request`. The reply comes once the request is committed; the outcome is in the timeline."},
	{area: convapi.Area, verb: convapi.VerbRewind, req: convapi.RewindRequest{}, rep: convapi.RewindReply{},
		note: "Puts back the files the conversation's write_file and edit_file calls changed after stream sequence `to` (from the node's checkpoints, the latest first; a file they created is removed) and forks it there as conv.fork does. A file changed outside the conversation since its last change is refused `changed_outside` unless `force`; `dry_run` changes nothing; run_command's calls are listed in `unchecked`, not undone. An operator's."},

	{area: projectapi.Area, verb: projectapi.VerbOpen, req: projectapi.OpenRequest{}, rep: projectapi.ProjectInfo{}},
	{area: projectapi.Area, verb: projectapi.VerbClose, req: projectapi.CloseRequest{}, rep: projectapi.CloseReply{}},
	{area: projectapi.Area, verb: projectapi.VerbList, rep: projectapi.ListReply{}},
	{area: projectapi.Area, verb: projectapi.VerbGet, req: projectapi.ProjectRequest{}, rep: projectapi.ProjectInfo{}},
	{area: projectapi.Area, verb: projectapi.VerbReload, req: projectapi.ProjectRequest{}, rep: projectapi.ReloadReply{}},
	{area: projectapi.Area, verb: projectapi.VerbTools, req: projectapi.ProjectRequest{}, rep: projectapi.ToolsReply{}},
	{area: projectapi.Area, verb: projectapi.VerbToolCall, req: projectapi.ToolCallRequest{}, rep: projectapi.ToolCallReply{}},
	{area: projectapi.Area, verb: projectapi.VerbAssets, req: projectapi.AssetsRequest{}, rep: projectapi.AssetsReply{}},
	{area: projectapi.Area, verb: projectapi.VerbDiagnostics, req: projectapi.ProjectRequest{}, rep: projectapi.DiagnosticsReply{}},
	{area: projectapi.Area, verb: "conv.start", note: movedNote("conv.start")},
	{area: projectapi.Area, verb: "conv.stop", note: movedNote("conv.stop")},
	{area: projectapi.Area, verb: "conv.ls", note: movedNote("conv.ls")},
}
