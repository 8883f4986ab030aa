// Package logapi serves the event log over NATS as the control-plane area
// "log" (subjects <prefix>.api.log.<verb>) and is the client that
// `jido-bus log` uses against a running server.
//
// Every verb takes a JSON request and answers {"ok":true,...} or
// {"ok":false,"error":{"type":"<word>","message":"..."}} (bus.OKReply,
// bus.ErrorReply). The verbs:
//
//	streams   {"prefix"}                         → {"streams":[StreamInfo]}
//	show      ReadRequest                        → ReadReply
//	tail      ReadRequest                        → ReadReply
//	export    ReadRequest                        → ReadReply
//	import    {"stream","events":[CloudEvent]}   → {"appended","duplicates"}
//	verify    {}                                 → VerifyReport
//	truncate  {"stream","before","dry_run"}      → {"removed","from","to","bytes","dry_run"}
//
// Reads are pages: a reply holds at most Limit entries and about
// MaxReplyBytes of them, and Next says where the following page starts.
// Following a stream live (tail -f) is done by the client polling the next
// page; NATS requests are short-lived, so the server keeps no per-client
// state.
//
// Local runs the same operations on an open *eventlog.Log, so a command can
// use either; Replicated runs them on a cluster's replicated log
// (eventlog/jslog) and refuses, with ReasonClusterUnsupported, what a
// partitioned log cannot do. Serve answers NATS requests through either
// (API).
package logapi
