package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/jido-bus/jido-bus/bus/emitstream"
	"github.com/jido-bus/jido-bus/projects/policy"
)

// serveEmitStreamFile is the emit_stream: section of serve --config: the
// JetStream stream that keeps what agents emit, for services that were
// down to read what they missed.
//
//	emit_stream:
//	  enabled: true      # default false: no stream
//	  max_age: 24h       # 0: no age limit
//	  max_bytes: 1GiB
type serveEmitStreamFile struct {
	Enabled  *bool       `yaml:"enabled"`
	MaxAge   string      `yaml:"max_age"`
	MaxBytes policy.Size `yaml:"max_bytes"`
}

// sizeFlag is a flag holding a size: bytes, or a number with KiB, MiB or
// GiB.
type sizeFlag struct{ v *policy.Size }

func (f sizeFlag) String() string {
	if f.v == nil {
		return ""
	}
	return f.v.String()
}
func (f sizeFlag) Set(s string) error {
	v, err := policy.ParseSize(s)
	if err != nil {
		return err
	}
	*f.v = v
	return nil
}
func (f sizeFlag) Type() string { return "size" }

func addServeEmitStreamFlags(cmd *cobra.Command, cfg *serveConfig) {
	f := cmd.Flags()
	cfg.emitStreamMaxBytes = emitstream.DefaultMaxBytes // Var takes no default
	f.BoolVar(&cfg.emitStream, "emit-stream", false, "keep what agents emit in the JetStream stream <PREFIX>_EMITS (JIDO_EMITS) of the embedded server, or of the cluster with --cluster, for services that were down to read with any JetStream client (each emit is also stored: more CPU a cast)")
	f.DurationVar(&cfg.emitStreamMaxAge, "emit-stream-max-age", emitstream.DefaultMaxAge, "how long the emit stream keeps an emit (0: no age limit, --emit-stream-max-bytes only)")
	f.Var(sizeFlag{&cfg.emitStreamMaxBytes}, "emit-stream-max-bytes", "the emit stream's size; past it the oldest emits go (bytes, or with KiB, MiB, GiB; at least 1MiB)")
}

// resolveServeEmitStream completes the emit stream's settings from the
// file's section f (what no flag gave) and checks them.
func resolveServeEmitStream(cfg *serveConfig, f serveEmitStreamFile, changed func(string) bool) error {
	if f.Enabled != nil && !changed("emit-stream") {
		cfg.emitStream = *f.Enabled
	}
	if f.MaxAge != "" && !changed("emit-stream-max-age") {
		d, err := time.ParseDuration(f.MaxAge)
		if err != nil {
			return fmt.Errorf("--config %s: emit_stream.max_age %q: give a duration such as 24h or 168h (0 for no age limit)", cfg.configPath, f.MaxAge)
		}
		cfg.emitStreamMaxAge = d
	}
	if f.MaxBytes != 0 && !changed("emit-stream-max-bytes") {
		cfg.emitStreamMaxBytes = f.MaxBytes
	}
	if !cfg.emitStream {
		return nil
	}
	if cfg.noJetStream {
		return errors.New("--emit-stream needs JetStream, which --no-jetstream turns off: give one of them")
	}
	if cfg.emitStreamMaxAge < 0 || cfg.emitStreamMaxAge > 0 && cfg.emitStreamMaxAge < time.Second {
		return fmt.Errorf("--emit-stream-max-age %s: give at least 1s, or 0 for no age limit", cfg.emitStreamMaxAge)
	}
	if cfg.emitStreamMaxBytes < emitstream.MinMaxBytes {
		return fmt.Errorf("--emit-stream-max-bytes %s: give at least 1MiB; the stream holds every emit of its max age, and its size must be bounded", cfg.emitStreamMaxBytes)
	}
	return nil
}

// emitStreamConfig is the node's configuration of the emit stream.
func (cfg serveConfig) emitStreamConfig() emitstream.Config {
	age := cfg.emitStreamMaxAge
	if age == 0 {
		age = emitstream.NoAgeLimit
	}
	return emitstream.Config{On: cfg.emitStream, MaxAge: age, MaxBytes: int64(cfg.emitStreamMaxBytes)}
}
