package eventlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// pebbleLogger adapts slog to pebble.Logger. Pebble reports routine events
// (WAL recycling, compactions) through Infof, which is noise for a user of
// the log, so those go to debug level.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Log(context.Background(), slog.LevelDebug, fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf is called by Pebble when it cannot go on without risking the
// data: a commit whose WAL could not be written, a MANIFEST that could not
// be synced, a broken invariant. Pebble's own logger exits the process;
// this one must not (the Log is a library, and its owner decides how to
// stop), but it must not return either, since Pebble carries on after
// Fatalf as if the call had not returned (a failed commit would then be
// reported as done). So it panics with a fatalPanic: a write that runs
// into it recovers it and poisons the Log (see Log.write); in one of
// Pebble's background goroutines it ends the process, after the message
// is logged. Damaged files are not fatal: Options.EventListener
// .DataCorruption reports them, and the read that met them fails.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "pebble", "fatal", true)
	panic(fatalPanic{err: errors.New("pebble: " + msg)})
}
