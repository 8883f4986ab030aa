// Package conversation is the pure conversation of jido-bus: its
// vocabulary — the event types, the extension attributes, the stream
// naming and the shape of each event's data. Its JSON Schemas are the
// files schemas/json/event/conversation.*.json.
//
// It imports only bus (and the CloudEvents SDK that bus.Signal is), so
// both the pure agent layer (agents/builtin's conversation agent) and the
// read models (conversation/views, which need the event log, hence
// Pebble) can share it without the agent layer pulling in storage.
package conversation
