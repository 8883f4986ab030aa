package main

import (
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus/emitstream"
)

// TestServeEmitStreamSettings: the emit stream's flags and keys, flags
// over the file, and the settings serve refuses with what to do.
func TestServeEmitStreamSettings(t *testing.T) {
	file := writeConfig(t, "data_dir: /tmp/x\nemit_stream: {enabled: true, max_age: 168h, max_bytes: 4GiB}\n")
	off := writeConfig(t, "data_dir: /tmp/x\nemit_stream: {enabled: false}\n")
	cases := []struct {
		args    []string
		want    emitstream.Config
		refused string
	}{
		{args: nil, want: emitstream.Config{MaxAge: 24 * time.Hour, MaxBytes: 1 << 30}},
		{args: []string{"--emit-stream"}, want: emitstream.Config{On: true, MaxAge: 24 * time.Hour, MaxBytes: 1 << 30}},
		{args: []string{"--emit-stream", "--emit-stream-max-age", "1h", "--emit-stream-max-bytes", "64MiB"}, want: emitstream.Config{On: true, MaxAge: time.Hour, MaxBytes: 64 << 20}},
		{args: []string{"--emit-stream", "--emit-stream-max-age", "0"}, want: emitstream.Config{On: true, MaxAge: emitstream.NoAgeLimit, MaxBytes: 1 << 30}},
		{args: []string{"--config", file}, want: emitstream.Config{On: true, MaxAge: 168 * time.Hour, MaxBytes: 4 << 30}},
		{args: []string{"--config", file, "--emit-stream-max-age", "2h"}, want: emitstream.Config{On: true, MaxAge: 2 * time.Hour, MaxBytes: 4 << 30}},
		{args: []string{"--config", file, "--emit-stream=false"}, want: emitstream.Config{MaxAge: 168 * time.Hour, MaxBytes: 4 << 30}},
		{args: []string{"--config", off}, want: emitstream.Config{MaxAge: 24 * time.Hour, MaxBytes: 1 << 30}},
		{args: []string{"--config", off, "--emit-stream"}, want: emitstream.Config{On: true, MaxAge: 24 * time.Hour, MaxBytes: 1 << 30}},
		{args: []string{"--no-jetstream"}, want: emitstream.Config{MaxAge: 24 * time.Hour, MaxBytes: 1 << 30}},
		{args: []string{"--no-jetstream", "--emit-stream"}, refused: "--no-jetstream"},
		{args: []string{"--emit-stream", "--emit-stream-max-bytes", "1000"}, refused: "at least 1MiB"},
		{args: []string{"--emit-stream", "--emit-stream-max-age", "10ms"}, refused: "at least 1s"},
		{args: []string{"--emit-stream", "--emit-stream-max-age", "-1h"}, refused: "at least 1s"},
	}
	for _, tc := range cases {
		cfg, err := serveFlags(t, nil, append([]string{"--data-dir", "/tmp/x"}, tc.args...)...)
		if tc.refused != "" {
			if err == nil || !strings.Contains(err.Error(), tc.refused) {
				t.Errorf("%v: %v, want an error saying %q", tc.args, err, tc.refused)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if got := cfg.emitStreamConfig(); got != tc.want {
			t.Errorf("%v: %+v, want %+v", tc.args, got, tc.want)
		}
	}
	cmd, _ := newServeCmdConfig()
	if err := cmd.ParseFlags([]string{"--emit-stream-max-bytes", "lots"}); err == nil || !strings.Contains(err.Error(), "MiB") {
		t.Errorf("--emit-stream-max-bytes lots: %v", err)
	}
}
