package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
)

// Dispatcher delivers signals emitted by agents.
//
// Dispatch delivers s, emitted by the agent whose id is from, and returns
// nil once the target has it (what "has it" means for each kind is in the
// package doc) or the error that stopped it. It may be called concurrently
// from any number of goroutines. It does not modify s and does not keep it
// after it returns, so the caller may reuse s then. A Dispatch still at
// work when ctx is done stops as soon as it can (a webhook between retries
// at once) and returns an error that wraps ctx.Err().
type Dispatcher interface {
	Dispatch(ctx context.Context, from string, s *bus.Signal) error
}

// DispatcherFunc adapts a function to a Dispatcher, for tests and for
// middleware that wraps one Dispatcher in another.
type DispatcherFunc func(ctx context.Context, from string, s *bus.Signal) error

// Dispatch calls f(ctx, from, s).
func (f DispatcherFunc) Dispatch(ctx context.Context, from string, s *bus.Signal) error {
	return f(ctx, from, s)
}

// Env holds what targets need at run time and what a Config, being data,
// cannot hold. Only what the Config's targets use has to be set.
type Env struct {
	// Conn publishes for nats targets; it is required when there is one.
	// The Dispatcher does not close it.
	Conn *nats.Conn
	// Subjects builds the default subject of nats targets; the zero value
	// uses bus.DefaultPrefix.
	Subjects bus.Subjects
	// Webhooks is the operator's webhook policy, compiled: it admits or
	// refuses each webhook target (see Admit) and sends the requests of
	// those it admits with its own HTTP client, which checks every address
	// it connects to, uses no proxy and follows no redirect. Nil admits no
	// webhook.
	Webhooks *WebhookGuard
	// Logger receives the records of log targets. Nil means slog.Default().
	Logger *slog.Logger
	// Clock stamps and spaces webhook attempts. Nil means the real clock.
	Clock Clock
	// LookupEnv reads the environment variables that webhooks name in
	// SecretEnv. Nil means os.LookupEnv.
	LookupEnv func(name string) (string, bool)
}

// New builds the Dispatcher that cfg describes. It validates cfg (the error
// is then a *bus.Error of type bus.ReasonInvalidRequest), admits its
// webhooks as Admit does (a *bus.Error of type bus.ReasonForbidden or
// bus.ReasonInvalidRequest) and checks that env holds what cfg's targets
// need. New does no I/O.
//
// The returned Dispatcher is immutable and safe for concurrent use; build
// it once and dispatch many signals with it.
func New(cfg Config, env Env) (Dispatcher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return build(cfg, env.withDefaults())
}

func (env Env) withDefaults() Env {
	if env.Logger == nil {
		env.Logger = slog.Default()
	}
	if env.Clock == nil {
		env.Clock = systemClock{}
	}
	if env.LookupEnv == nil {
		env.LookupEnv = os.LookupEnv
	}
	return env
}

// build assumes cfg is valid.
func build(cfg Config, env Env) (Dispatcher, error) {
	if cfg.Targets != nil {
		return newFanout(cfg.Targets, env)
	}
	switch cfg.kind() {
	case KindNATS:
		if env.Conn == nil {
			return nil, errors.New("dispatch: a nats target needs Env.Conn")
		}
		return newNATSTarget(cfg, env), nil
	case KindWebhook:
		secret, err := env.Webhooks.admit(cfg, env.LookupEnv, "")
		if err != nil {
			return nil, err
		}
		return newWebhook(cfg, secret, env), nil
	case KindLog:
		return newLogTarget(cfg, env), nil
	case KindNoop:
		return noop{}, nil
	}
	return nil, fmt.Errorf("dispatch: kind %q has no dispatcher", cfg.Kind)
}

// noop is the KindNoop target: it drops signals on purpose and never fails.
type noop struct{}

func (noop) Dispatch(context.Context, string, *bus.Signal) error { return nil }
