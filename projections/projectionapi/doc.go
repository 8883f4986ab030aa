// Package projectionapi serves the projections and the conversations read
// models over NATS, as the control-plane areas "projection" and "conv"
// (subjects <prefix>.api.<area>.<verb>), and is the client that
// `jido-bus projection` and `jido-bus conv` use against a running server.
//
// Every verb takes a JSON request and answers {"ok":true,...} or
// {"ok":false,"error":{"type":"<word>","message":"..."}}. The verbs:
//
//	projection.ls       {}                          → {"projections":[projections.Status]}
//	projection.get      GetRequest                  → projections.State
//	projection.rebuild  {"name"}                    → {"status":projections.Status}
//	conv.ls             ConvListRequest             → ConvListReply
//	conv.show           ConvShowRequest             → ConvShowReply
//	conv.fork           ConvForkRequest             → ConvForkReply
//
// A rebuild answers as soon as it is requested; its progress is the
// projection's Lag in projection.ls. Unknown projections, conversations and
// keys are errors of type not_found.
//
// Local runs the same operations in process on a *projections.Runner and
// the *eventlog.Log it folds, so a command can use either; Serve answers
// NATS requests through a Local. The verbs conv.send and conv.follow belong
// to the agent runtime (they need a running conversation agent) and are
// not served here; a client learns of them from the runtime's own area.
package projectionapi
