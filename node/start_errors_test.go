package node

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartErrors: every way a start fails that an operator meets (the
// data dir held by another node, the port taken by another server, a data
// dir that cannot be created, a NATS URL nobody listens on, a bad prefix,
// the metrics port taken) returns an error that says what happened and
// what to do, never a panic, and leaves nothing running (goleak, in
// TestMain, checks that last part).
func TestStartErrors(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	// A port nothing listens on: listen, note the port, close.
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.Addr().String()
	free.Close()

	held := t.TempDir()
	first := startNode(t, held)
	defer first.Shutdown(context.Background())

	aFile := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(aFile, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	local := NATSConfig{Listen: "127.0.0.1:0"}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"data dir held by another node", Config{DataDir: held, NATS: local}, "in use by another jido-bus process"},
		{"port in use", Config{DataDir: t.TempDir(), NATS: NATSConfig{Listen: taken.Addr().String()}}, "is another server using the port?"},
		{"data dir under a file", Config{DataDir: filepath.Join(aFile, "data"), NATS: local}, "create the data dir"},
		{"nothing at the NATS URL", Config{DataDir: t.TempDir(), NATS: NATSConfig{URL: "nats://" + freeAddr}}, "is the server running?"},
		{"bad prefix", Config{DataDir: t.TempDir(), NATS: local, Prefix: "a..b"}, "prefix"},
		{"metrics port in use", Config{DataDir: t.TempDir(), NATS: local, MetricsAddr: taken.Addr().String()}, "choose another --metrics address"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.NoSync = true
			var n *Node
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("Start panicked: %v", r)
					}
				}()
				n, err = Start(context.Background(), c.cfg)
			}()
			if err == nil {
				n.Shutdown(context.Background())
				t.Fatal("Start succeeded")
			}
			if n != nil {
				t.Errorf("Start returned a node with its error %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not say %q", err, c.want)
			}
		})
	}
}
