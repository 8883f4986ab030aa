// Package views holds the read models of a conversation as projections
// (timeline, llm_context, status, diagnostics), what happens on resume and
// on fork, and the artifact store for large tool outputs.
//
// A conversation is the log stream conversation/<project-id>/<conversation-id>
// (conversation.Stream). The agent runtime appends each accepted conversation
// event there as the CloudEvent itself, beside bookkeeping entries of its
// own whose types start with "jido."; the projections select
// conversation.TypePattern and so never see the bookkeeping. Each read model
// keeps one state per conversation, keyed "<project-id>/<conversation-id>".
//
// The four projections decode each event's data once per entry and share it
// (projections.Memo). An event whose data does not decode is counted by
// diagnostics (Invalid) and otherwise ignored, so one bad entry never stops a
// rebuild.
//
// Resume and Fork are pure: given what the log holds, they return the
// events to append, with ids derived from what they answer, so that running
// them twice (after a crash between deciding and appending) appends nothing
// new — the log drops an event whose source and id it already holds.
package views
