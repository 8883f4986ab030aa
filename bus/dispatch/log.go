package dispatch

import (
	"context"
	"log/slog"

	"github.com/jido-bus/jido-bus/bus"
)

// LogMessage is the message of the record a log target writes.
const LogMessage = "signal emitted"

// logTarget writes one slog record per signal, with the signal's id, type,
// source, the emitting agent and the size of its data in bytes (not the
// data itself, which may be large or sensitive).
type logTarget struct {
	logger *slog.Logger
	level  slog.Level
}

func newLogTarget(cfg Config, env Env) *logTarget {
	level, _ := parseLevel(cfg.Level) // cfg is valid
	return &logTarget{logger: env.Logger, level: level}
}

func (l *logTarget) Dispatch(ctx context.Context, from string, s *bus.Signal) error {
	l.logger.LogAttrs(ctx, l.level, LogMessage,
		slog.String("id", s.ID()),
		slog.String("type", s.Type()),
		slog.String("source", s.Source()),
		slog.String("from", from),
		slog.Int("data_bytes", len(s.Data())),
	)
	return nil
}
