// Package conversation is the pure conversation of jido-bus: what a
// conversation is, says and decides, with no I/O.
//
//   - its vocabulary: the event types, the extension attributes, the
//     keys ("<project-id>/<conversation-id>") and streams, the shape of
//     each event's data and its decoder (event.go, key.go, data.go,
//     decode.go); the JSON Schemas are schemas/json/event/conversation.*.json;
//   - the agent type "conversation" (agent.go): it validates each event and
//     tracks what is pending, and ReadState reads its state for others;
//   - the loop (loop.go): after each event it decides the next step as
//     directives (directives.go) — an LLM call, tool runs, the end of the
//     turn — from the conversation's state alone.
//
// The line this package draws: a conversation decides, the assistant
// acts. Deciding is pure and lives here, so that `jido-bus log replay
// --verify` re-decides a whole conversation without a model or a tool.
// Acting — calling a model, running a tool through a project's runner —
// is the executors' of those directives (projects/assistant). The read
// models folded from a conversation's stream are conversation/views.
//
// It is part of the pure layer (agents/purity_test.go): it imports agents,
// bus and schemas only, and no clock, randomness, goroutine, NATS or
// Pebble — time and ids come from the events.
//
// # Where conversations live, and the rest
//
// The folder conversation/ owns conversations: this package (pure),
// conversation/views (the read models) and conversation/convapi (the
// conv.* API and running them). Each concern has one folder:
//
//	folder                 owns                                                   may import
//	schemas/               the JSON Schemas of the wire                           nothing of the module
//	bus/                   signals, subjects, codec, the NATS bus, dispatch       schemas
//	eventlog/              the event log, its API (logapi), dead letters (dlq)    bus, schemas
//	agents/                the pure agent model, the built-in agent types         bus, schemas (pure)
//	conversation/          a conversation's vocabulary, agent type, decisions     agents, bus, schemas (pure)
//	projections/           the projection runner and store, its API               agents, eventlog, bus, schemas
//	agents/runtime/        running agents on the log; the agent API and ingress   the levels below
//	conversation/views/    a conversation's read models, the artifact store       the levels below
//	projects/              the project engine, the assistant, tools, gateways     the levels below
//	conversation/convapi/  the conv.* API; starting, steering, resuming           the levels below
//	internal/frontdoor/    the HTTP door in front of the gateways (not an API)    the levels below
//	node/                  assembling a node, and nothing else                    the levels below
//	internal/bench/        the engine of jido-bus bench (not an API)              the levels below
//	cmd/, e2e/, examples/  the binary, its end-to-end tests, examples             the levels below
//	internal/goroutines/,  helpers every level may use: a goroutine owner, the    nothing of the module
//	internal/testkit/      tests' Eventually
//
// A folder's subfolders are its own (agents/builtin is agents', but
// agents/runtime and the conversation/ folders are listed apart). The
// levels are the dependency line: each imports only its own folder and
// the levels to its right; a comma joins folders of one level, which do
// not import each other. agents/layers_test.go checks the whole import
// graph against it:
//
//	cmd, e2e, examples → internal/bench → node → internal/frontdoor →
//	projects, conversation/convapi → agents/runtime, conversation/views →
//	projections, conversation → agents, eventlog → bus → schemas →
//	internal/goroutines, internal/testkit
package conversation
