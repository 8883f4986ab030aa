package projections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// pebbleLogger adapts slog to pebble.Logger, as the event log's does:
// Pebble's routine messages go to debug level.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Log(context.Background(), slog.LevelDebug, fmt.Sprintf(format, args...), "component", "pebble", "db", "projections")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble", "db", "projections")
}

// Fatalf is called by Pebble when it cannot continue without risking the
// data: a commit whose WAL could not be written (a full disk), a broken
// invariant. It must not return (Pebble would carry on as if it had not
// been called), and must not exit the process either: a full disk makes
// the node's event log fail too, and the node then stops on its own, with
// the exit code that says so. So it panics with a fatalPanic, which a
// commit that ran into it recovers (Store.commit); in one of Pebble's
// background goroutines it ends the process, after the message is logged.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "pebble", "db", "projections", "fatal", true)
	panic(fatalPanic{err: errors.New("pebble: " + msg)})
}

// fatalPanic is what pebbleLogger.Fatalf panics with.
type fatalPanic struct{ err error }
