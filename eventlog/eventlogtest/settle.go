// Package eventlogtest helps the tests and benchmarks of packages built on
// the event log.
package eventlogtest

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Settle opens the closed log in dir and waits until Pebble has run no
// compaction for a second, so that a benchmark that reads the log next
// measures a log at rest, as a server's log is between bursts, and not the
// compactions that writing it left behind.
func Settle(tb testing.TB, dir string) {
	tb.Helper()
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger{}})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for quiet := 0; quiet < 10; {
		time.Sleep(100 * time.Millisecond)
		if db.Metrics().Compact.NumInProgress > 0 {
			quiet = 0
		} else {
			quiet++
		}
	}
}

// quietLogger drops Pebble's routine messages.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)              {}
func (quietLogger) Errorf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
func (quietLogger) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
