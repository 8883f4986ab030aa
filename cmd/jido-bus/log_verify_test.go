package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
)

// TestLogVerifyChecksTheWAL: bytes flipped in the middle of the newest
// WAL make `log verify --data-dir` report the file and exit 2, not "ok",
// with small entries and with entries whose records span several 32 KiB
// WAL blocks.
func TestLogVerifyChecksTheWAL(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	for _, c := range []struct {
		name         string
		entries, pad int
	}{{"1KiB", 600, 1 << 10}, {"16KiB", 100, 16 << 10}, {"100KiB", 30, 100 << 10}} {
		t.Run(c.name, func(t *testing.T) { verifyDamagedWAL(t, c.entries, c.pad) })
	}
}

// verifyDamagedWAL writes entries entries of pad bytes, flips sixteen
// bytes in the middle of the newest WAL and runs log verify.
func verifyDamagedWAL(t *testing.T, entries, pad int) {
	dir := filepath.Join(t.TempDir(), "data")
	l, err := eventlog.Open(logDir(dir), eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", pad) // many WAL blocks after the middle
	for i := range entries {
		s, err := bus.NewSignal("user.created", "test", map[string]string{"pad": big})
		if err != nil {
			t.Fatal(err)
		}
		s.SetID(fmt.Sprint(i))
		if _, err := l.Append(context.Background(), "agent/a", eventlog.AnyVersion, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	wals, _ := filepath.Glob(filepath.Join(logDir(dir), "*.log"))
	if len(wals) == 0 {
		t.Fatal("no WAL")
	}
	wal := wals[len(wals)-1]
	data, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(data) / 2; i < len(data)/2+16; i++ {
		data[i] ^= 0x5a
	}
	if err := os.WriteFile(wal, data, 0o644); err != nil {
		t.Fatal(err)
	}

	out, _, err := runLog(t, "", "verify", "--data-dir", dir)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 2 {
		t.Fatalf("verify of a damaged WAL: %v\n%s", err, out)
	}
	if !strings.Contains(out, "DAMAGED") || !strings.Contains(out, wal) {
		t.Fatalf("the report does not name the WAL %s:\n%s", wal, out)
	}
}
