package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
)

func TestLogTarget(t *testing.T) {
	cases := []struct {
		name      string
		level     string
		loggerMin slog.Level
		wantLevel string // "" means no record
	}{
		{"default level", "", slog.LevelInfo, "INFO"},
		{"warn", "warn", slog.LevelInfo, "WARN"},
		{"below the logger's level", "debug", slog.LevelInfo, ""},
		{"debug", "debug", slog.LevelDebug, "DEBUG"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: tc.loggerMin}))
			d, err := New(Config{Kind: KindLog, Level: tc.level}, Env{Logger: logger})
			if err != nil {
				t.Fatal(err)
			}
			s := testSignal(t, "counter.changed")
			if err := d.Dispatch(context.Background(), "team/c1", &s); err != nil {
				t.Fatal(err)
			}
			if tc.wantLevel == "" {
				if buf.Len() != 0 {
					t.Fatalf("logged %s, want nothing", buf.String())
				}
				return
			}
			var rec map[string]any
			if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
				t.Fatalf("not one JSON record: %q", buf.String())
			}
			delete(rec, "time")
			want := map[string]any{
				"level": tc.wantLevel, "msg": LogMessage,
				"id": s.ID(), "type": "counter.changed", "source": "/agents/c1", "from": "team/c1",
				"data_bytes": float64(len(s.Data())),
			}
			if !reflect.DeepEqual(rec, want) {
				t.Errorf("record = %v\nwant %v", rec, want)
			}
		})
	}
}

func TestNoop(t *testing.T) {
	d, err := New(Config{Kind: KindNoop}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	// Even an invalid signal: noop looks at nothing.
	if err := d.Dispatch(context.Background(), "", new(bus.Signal)); err != nil {
		t.Fatalf("noop Dispatch = %v", err)
	}
}
