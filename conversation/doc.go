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
// # Where conversations live
//
// The folder conversation/ owns conversations: this package (pure),
// conversation/views (the read models) and conversation/convapi (the
// conv.* API and running them). The layout of every folder, what each
// may import and the dependency line that agents/layers_test.go checks
// are stated once, in docs/development.md (The layout).
package conversation
