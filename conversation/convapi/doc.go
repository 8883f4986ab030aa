// Package convapi runs the conversations of a node and serves them over
// NATS, JSON request/reply on <prefix>.api.conv.<verb>:
//
//	start    {"project":"p1","conversation":"c1","system","llm","limits","budget","mode","worktree"} → Info {"project","conversation","id":"p1/c1","stream","status"}
//	stop     {"project":"p1","conversation":"c1","reason","worktree"}     → {"project","conversation","worktree"}
//	ls       {"project","after","limit"}                                  → {"conversations":[Summary…],"next"}
//	show     {"conv":"p1/c1","view","seq"}                                → {"conv","view","position","state"}
//	fork     {"conv":"p1/c1","seq":N,"as"}                                → {"conv","stream","events","version"}
//	send     {"conv":"p1/c1","text":"…"}                                  → {"id","conv","version"}
//	cancel   {"conv":"p1/c1","reason"}                                    → {"id","conv","version"}
//	approve  {"conv":"p1/c1","call_id","decision","remember","reason","by"} → {"id","conv","version"}
//	mode     {"conv":"p1/c1","mode","reason","by"}                         → {"id","conv","version"} (an operator's)
//
// Every reply is {"ok":true,…} or {"ok":false,"error":{"type","message"}}.
// ls is the one list of conversations: every conversation the log holds,
// with its state, from the status read model (views), which follows the
// log in the background; `agent list --type conversation` lists the
// agents that run. The project area's conv.start, conv.stop and conv.ls
// of the release before answer with an error of type moved naming their
// verb here.
//
// A conversation of a project is a conversation agent
// <project>/<conversation>, a child of the project's agent: it stops when
// the project closes and comes back with it after a restart. Service
// (start.go, send.go, control.go, fork.go) does what the verbs say;
// Resume closes the work a restart interrupted; Follow follows one
// conversation (the A2A gateway's streams); Publisher publishes every
// committed conversation event on <prefix>.emit.<key>.<type>; the guard
// (guard.go) refuses, as forbidden, the conversation events only the node
// may write when a client sends them. Reader serves ls and show from a
// data dir when no node runs; Client is the other end, for
// `jido-bus conv`.
//
// In the dependency line (package conversation's doc) this package sits
// beside projects, below node: it imports conversation,
// conversation/views, agents/runtime, projections, eventlog and bus (NATS
// included), never projects — what it needs of the project engine is the
// Projects interface, which the node fills with it — and projects never
// imports it: the assistant drives a conversation through its agent, not
// through this API.
package convapi
