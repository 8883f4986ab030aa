package natsserver

import (
	"context"
	"fmt"
	"log/slog"
)

// slogAdapter hands nats-server's printf-style log calls to slog, tagged
// with component=nats so they can be told from jido-bus's own lines, and
// the permission violations among them to Options.OnViolation.
type slogAdapter struct {
	l    *slog.Logger
	opts *Options
}

func (a slogAdapter) log(level slog.Level, format string, v []any) {
	ctx := context.Background()
	if a.l.Enabled(ctx, level) {
		a.l.Log(ctx, level, fmt.Sprintf(format, v...), "component", "nats")
	}
}

// Notices (the start-up banner, "Server is ready") go to debug: jido-bus
// logs what matters of them itself.
func (a slogAdapter) Noticef(format string, v ...any) { a.log(slog.LevelDebug, format, v) }
func (a slogAdapter) Warnf(format string, v ...any)   { a.log(slog.LevelWarn, format, v) }
func (a slogAdapter) Fatalf(format string, v ...any)  { a.log(slog.LevelError, format, v) }
func (a slogAdapter) Errorf(format string, v ...any) {
	if a.opts.OnViolation != nil {
		if x, ok := a.opts.violation(format, v); ok {
			a.opts.OnViolation(x)
		}
	}
	a.log(slog.LevelError, format, v)
}
func (a slogAdapter) Debugf(format string, v ...any) { a.log(slog.LevelDebug, format, v) }
func (a slogAdapter) Tracef(format string, v ...any) { a.log(slog.LevelDebug-4, format, v) }
