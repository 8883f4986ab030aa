// Package bus holds what every part of jido-bus agrees on about signals:
// the signal type (a CloudEvents 1.0 event), its validation, the subject
// scheme, signal-type patterns with Jido's '*' and '**', and a router that
// orders matching routes.
//
// The package imports no NATS and does no I/O, so the pure agent layer may
// use it. What touches NATS lives in its sub-packages: the codec
// (bus/codec), the embedded server (bus/natsserver), connections,
// subscriptions and dead letters (bus/natsbus), and dispatch of emitted
// signals (bus/dispatch).
//
// # Patterns
//
// A pattern is one or more segments joined by '.'. A segment is a literal of
// [A-Za-z0-9_-]+, '*' (exactly one segment) or '**' (zero or more segments,
// anywhere, several times but never twice in a row). "audit.**" matches
// "audit" and "audit.log.read"; "user.**.created" matches "user.created";
// "a.**.c.**.f" matches "a.c.f".
//
// # Errors
//
// Errors that describe bad input are *Error values whose Type is one of the
// Reason constants; the same word names the dead-letter subject
// (jido.dlq.<reason>) and the "type" of an error reply.
package bus
