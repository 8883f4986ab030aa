package jslog

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus/natsserver/jstest"
)

// cluster is the 3-server cluster every test shares; each test opens its
// own Log under a prefix of its own, so no two tests see each other's
// streams.
var cluster *jstest.Cluster

func TestMain(m *testing.M) { os.Exit(jstest.Main(m, 3, &cluster)) }

var prefixes atomic.Int64

// openLog opens a Log with a prefix of its own on the shared cluster.
func openLog(t testing.TB, opts Options) (*Log, *nats.Conn) {
	t.Helper()
	nc := cluster.Connect(t)
	return openOn(t, nc, opts), nc
}

func openOn(t testing.TB, nc *nats.Conn, opts Options) *Log {
	t.Helper()
	if opts.Prefix == "" {
		opts.Prefix = fmt.Sprintf("t%d", prefixes.Add(1))
	}
	if opts.Partitions == 0 {
		opts.Partitions = 2
	}
	l, err := Open(t.Context(), nc, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
