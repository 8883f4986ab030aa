package eventlog

import (
	"context"
	"fmt"
	"log/slog"
	"os"
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

// Fatalf is called by Pebble when it cannot continue without risking the
// data (for example a failed WAL write); like Pebble's own default logger
// it exits the process.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble", "fatal", true)
	os.Exit(1)
}
