// Package emitstream keeps what agents emit in a JetStream stream, so that
// a service that was down reads what it missed with any JetStream client.
package emitstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/internal/jsplace"
)

// The emit stream: a JetStream stream that stores what agents emit on
// <prefix>.emit.> as NATS delivers it, so that a service that was down
// reads what it missed with any JetStream client (`nats consumer add`,
// nats.go's jetstream package) instead of the node's log API. The node
// publishes emits on core NATS as before; the stream captures them. Each
// emit carries Nats-Msg-Id (dispatch.MsgID: its source and id), so one
// published again by recovery after a crash is stored once within
// DuplicateWindow; past it the copy is stored again with the same
// id and position headers (Jido-Stream, Jido-Seq, Jido-Emit-Index), by
// which a consumer drops what it already handled.

// Defaults of Config.
const (
	DefaultMaxAge   = 24 * time.Hour
	DefaultMaxBytes = 1 << 30 // 1 GiB
	// NoAgeLimit as MaxAge keeps emits until MaxBytes pushes
	// the oldest out.
	NoAgeLimit time.Duration = -1
	// DuplicateWindow is how long the stream remembers the
	// Nats-Msg-Id of what it stored: a node killed and restarted within it
	// re-publishes its unconfirmed emits without storing them twice. The
	// server keeps every id of the window in memory (about 100 bytes
	// each), which is why it is not longer.
	DuplicateWindow = 2 * time.Minute
	// MinMaxBytes is the smallest byte limit accepted: a smaller
	// stream would keep too few emits to catch anyone up.
	MinMaxBytes = 1 << 20
	// maxConsumers bounds the consumers clients may create on
	// the stream, each of which the server keeps in memory.
	maxConsumers = 1024
	// DeltaTTL is the time a transient emit (an assistant delta, marked
	// with the header Nats-TTL) stays in the stream: long enough for a
	// consumer reading live to see it, too short for deltas to crowd the
	// committed emits out of the stream's limits. They are not in the log
	// either; the committed message carries the whole text.
	DeltaTTL = 5 * time.Second
	// timeout bounds the JetStream requests of Ensure.
	timeout = 10 * time.Second
)

// Config configures the emit stream. The zero value is off: the
// stream costs every emit a store in JetStream (about 8 µs of CPU a cast on
// this project's 2-core bench machine, 5-28% more than without), which a
// node whose emits nobody reads durably should not pay.
type Config struct {
	// On makes the stream, with the limits below. Off, no stream is made
	// and one that exists is left as it is (delete it with
	// `nats stream rm` as an admin to free its disk).
	On bool
	// MaxAge is how long an emit is kept; zero means
	// DefaultMaxAge, NoAgeLimit no age limit.
	MaxAge time.Duration
	// MaxBytes bounds the stream's size: past it the oldest emits go.
	// Zero means DefaultMaxBytes; at least
	// MinMaxBytes.
	MaxBytes int64
	// Replicas is the stream's replicas; zero means 1 (the embedded
	// server). A cluster asks for 3.
	Replicas int
}

// Name is the name of the emit stream under subjects' prefix:
// JIDO_EMITS for jido, ACME_JIDO_EMITS for acme.jido. Two prefixes that
// differ only in case or in '.' against '_' share a name, and the second
// node to start is refused (the subjects differ).
func Name(subjects bus.Subjects) string {
	return strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(subjects.Name())) + "_EMITS"
}

// metadataKey marks the stream as the node's, with what it keeps.
const metadataKey = "jido-bus"

// streamConfig is the stream cfg asks for.
func (cfg Config) streamConfig(subjects bus.Subjects) (jetstream.StreamConfig, error) {
	maxAge, maxBytes, replicas := cfg.MaxAge, cfg.MaxBytes, cfg.Replicas
	switch {
	case maxAge == 0:
		maxAge = DefaultMaxAge
	case maxAge == NoAgeLimit:
		maxAge = 0 // JetStream's "no limit"
	case maxAge < time.Second:
		return jetstream.StreamConfig{}, fmt.Errorf("emit stream: max age %s: give at least 1s, or 0 for no age limit (--emit-stream-max-age)", maxAge)
	}
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	if maxBytes < MinMaxBytes {
		return jetstream.StreamConfig{}, fmt.Errorf("emit stream: max bytes %d: give at least %d (1MiB); the stream's size must be bounded, it holds every emit of its max age (--emit-stream-max-bytes)", maxBytes, MinMaxBytes)
	}
	if replicas == 0 {
		replicas = 1
	}
	subject := subjects.All(bus.KindEmit)
	return jetstream.StreamConfig{
		Name:        Name(subjects),
		Description: "what jido-bus agents emit on " + subject + ", captured as published; kept by age and size (serve --emit-stream-max-age, --emit-stream-max-bytes)",
		Subjects:    []string{subject},
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      maxAge,
		MaxBytes:    maxBytes,
		MaxMsgs:     -1,
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
		Duplicates:  DuplicateWindow,
		// What agents emitted stays as it was until the limits take it:
		// no one removes a message or purges the stream through the API
		// (an admin may still delete the whole stream; the node makes it
		// again at its next start).
		DenyDelete:   true,
		DenyPurge:    true,
		AllowMsgTTL:  true, // transient emits carry Nats-TTL (DeltaTTL)
		MaxConsumers: maxConsumers,
		Metadata:     map[string]string{metadataKey: "emits"},
	}, nil
}

// ErrConflict is the error of a start that finds a stream it
// cannot make the emit stream: one of that name that keeps other subjects
// or keeps them otherwise, or another stream that captures the emit
// subjects.
var ErrConflict = errors.New("emit stream conflict")

// Ensure creates the emit stream, or updates the one there to
// cfg's limits, and returns its name. A stream of that name that is not an
// emit stream (other subjects, another storage or retention) is never
// changed: the node refuses to start, saying which setting differs.
func Ensure(ctx context.Context, nc *nats.Conn, subjects bus.Subjects, cfg Config) (string, error) {
	want, err := cfg.streamConfig(subjects)
	if err != nil {
		return "", err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return "", fmt.Errorf("emit stream %s: %w", want.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s, err := js.Stream(ctx, want.Name)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		err := jsplace.Retry(ctx, want.Replicas, func() error {
			_, err := js.CreateStream(ctx, want)
			return err
		})
		if jsplace.IsNoPeers(err) {
			return "", fmt.Errorf("emit stream %s: %w", want.Name, err)
		}
		if err != nil {
			return "", fmt.Errorf("%w: create the JetStream stream %s for %s: %w (is another stream capturing %s? `nats stream ls` as an admin shows it; delete it, or start with --emit-stream=false)",
				ErrConflict, want.Name, want.Subjects[0], err, want.Subjects[0])
		}
		return want.Name, nil
	case err != nil:
		return "", fmt.Errorf("emit stream %s: %w (start with --emit-stream=false to run without it)", want.Name, err)
	}
	have := s.CachedInfo().Config
	if why := mismatch(have, want); why != "" {
		return "", fmt.Errorf("%w: a JetStream stream named %s exists and %s, so it is not this node's emit stream and is left as it is; rename or delete it (`nats stream rm %s` as an admin), use another --prefix, or start with --emit-stream=false",
			ErrConflict, want.Name, why, want.Name)
	}
	// Keep what the operator may have added (a description, sources,
	// metadata of their own); take the limits and guarantees from want.
	upd := have
	upd.Description = want.Description
	upd.MaxAge, upd.MaxBytes, upd.MaxMsgs, upd.Discard = want.MaxAge, want.MaxBytes, want.MaxMsgs, want.Discard
	upd.Duplicates, upd.Replicas, upd.MaxConsumers = want.Duplicates, want.Replicas, want.MaxConsumers
	upd.DenyDelete, upd.DenyPurge, upd.AllowMsgTTL = want.DenyDelete, want.DenyPurge, want.AllowMsgTTL
	if upd.Metadata == nil {
		upd.Metadata = map[string]string{}
	}
	upd.Metadata[metadataKey] = want.Metadata[metadataKey]
	if _, err := js.UpdateStream(ctx, upd); err != nil {
		return "", fmt.Errorf("%w: update the JetStream stream %s to max age %s, max bytes %d: %w (start with --emit-stream=false to run without it)",
			ErrConflict, want.Name, want.MaxAge, want.MaxBytes, err)
	}
	return want.Name, nil
}

// mismatch says how have cannot be the emit stream want
// describes, or "" when it can be updated to it.
func mismatch(have, want jetstream.StreamConfig) string {
	switch {
	case !slices.Equal(have.Subjects, want.Subjects):
		return fmt.Sprintf("keeps the subjects %q, not %q", have.Subjects, want.Subjects)
	case have.Storage != want.Storage:
		return fmt.Sprintf("has %s storage, not %s", have.Storage, want.Storage)
	case have.Retention != want.Retention:
		return fmt.Sprintf("has %s retention, not %s (acknowledging would remove what other services have yet to read)", have.Retention, want.Retention)
	case have.Mirror != nil:
		return "is a mirror"
	case have.Sealed:
		return "is sealed"
	}
	return ""
}
