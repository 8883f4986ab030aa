package projections

import (
	"context"
	"fmt"
	"log/slog"
	"os"
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
// data; like Pebble's default logger it exits the process.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble", "db", "projections", "fatal", true)
	os.Exit(1)
}
