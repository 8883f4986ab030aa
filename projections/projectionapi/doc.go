// Package projectionapi serves the projections over NATS, as the
// control-plane area "projection" (subjects <prefix>.api.projection.<verb>),
// and is the client that `jido-bus projection` uses against a running
// server.
//
// Every verb takes a JSON request and answers {"ok":true,...} or
// {"ok":false,"error":{"type":"<word>","message":"..."}}. The verbs:
//
//	projection.ls       {}                          → {"projections":[projections.Status]}
//	projection.get      GetRequest                  → projections.State
//	projection.rebuild  {"name"}                    → {"status":projections.Status}
//
// A rebuild answers as soon as it is requested; its progress is the
// projection's Lag in projection.ls. Unknown projections and keys are
// errors of type not_found.
//
// Local runs the same operations in process on a *projections.Runner, so
// a command can use either; Serve answers NATS requests through a Local.
// The conversations' read models are read through their own area, conv
// (conversation/convapi).
package projectionapi
