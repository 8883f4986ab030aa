// Package testkit holds what the tests of every package share, so that
// none keeps its own copy: Eventually, the one way a test waits for
// something to happen, and Timeout, the one bound on that wait;
// BlockedIn, for a goroutine held where a test wants it; JSONText, the
// strings that exercise every escape of encoding/json, for property
// tests of the hand-written JSON encoders; Buffer, which a logger or a
// command may write while the test reads it.
//
// It imports nothing of jido-bus, so any package's tests (internal or
// external) can use it without an import cycle.
package testkit
