package jslog

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jido-bus/jido-bus/internal/jsplace"
)

// TestOpenRefusesUnsafeStreams: a partition stream that exists with a
// setting that may drop or lose an entry is refused by name.
func TestOpenRefusesUnsafeStreams(t *testing.T) {
	cases := []struct {
		setting string
		mutate  func(*jetstream.StreamConfig)
	}{
		{"storage", func(c *jetstream.StreamConfig) { c.Storage = jetstream.MemoryStorage }},
		{"num_replicas", func(c *jetstream.StreamConfig) { c.Replicas = 1 }},
		{"persist_mode", func(c *jetstream.StreamConfig) {
			c.PersistMode = jetstream.AsyncPersistMode
			// The server refuses async persistence on a replicated stream
			// and with atomic publish.
			c.Replicas = 1
			c.AllowAtomicPublish = false
		}},
		{"max_age", func(c *jetstream.StreamConfig) { c.MaxAge = time.Hour }},
		{"max_msgs", func(c *jetstream.StreamConfig) { c.MaxMsgs = 1000 }},
		{"max_bytes", func(c *jetstream.StreamConfig) { c.MaxBytes = 1 << 30 }},
		{"max_msgs_per_subject", func(c *jetstream.StreamConfig) { c.MaxMsgsPerSubject = 10 }},
		{"retention", func(c *jetstream.StreamConfig) { c.Retention = jetstream.InterestPolicy }},
		{"duplicate_window", func(c *jetstream.StreamConfig) { c.Duplicates = time.Second }},
		{"allow_atomic", func(c *jetstream.StreamConfig) { c.AllowAtomicPublish = false }},
		{"metadata jido.partitions", func(c *jetstream.StreamConfig) { c.Metadata[metaPartitions] = "64" }},
	}
	nc := cluster.Connect(t)
	js, _ := jetstream.New(nc)
	for _, c := range cases {
		t.Run(c.setting, func(t *testing.T) {
			opts := Options{Prefix: "unsafe" + strings.NewReplacer(" ", "", ".", "", "_", "").Replace(c.setting), Partitions: 1}.withDefaults()
			l := &Log{opts: opts, upper: strings.ToUpper(opts.Prefix)}
			cfg := l.partitionConfig(0)
			c.mutate(&cfg)
			if _, err := js.CreateStream(t.Context(), cfg); err != nil {
				t.Fatalf("create the unsafe stream: %v", err)
			}
			t.Cleanup(func() { js.DeleteStream(context.Background(), cfg.Name) })
			_, err := Open(t.Context(), nc, opts)
			se, ok := errors.AsType[*SettingError](err)
			if !ok || !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), c.setting) || !strings.Contains(err.Error(), cfg.Name) {
				t.Fatalf("Open: err = %v, want a SettingError naming %s on %s", err, c.setting, cfg.Name)
			}
			if se.Why == "" {
				t.Fatal("the refusal does not say why")
			}
		})
	}
}

func TestOpenRefusesOtherPartitionCount(t *testing.T) {
	l, nc := openLog(t, Options{Partitions: 2})
	_, err := Open(t.Context(), nc, Options{Prefix: l.opts.Prefix, Partitions: 3})
	if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "jido.partitions is 2") {
		t.Fatalf("Open with 3 partitions on a log of 2: err = %v", err)
	}
}

func TestOpenRefusesFewerReplicasUnlessAllowed(t *testing.T) {
	nc := cluster.Connect(t)
	_, err := Open(t.Context(), nc, Options{Prefix: "fewer", Partitions: 1, Replicas: 1})
	if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "replicas") {
		t.Fatalf("Open with 1 replica: err = %v", err)
	}
	if _, err := Open(t.Context(), nc, Options{Prefix: "fewer", Partitions: 1, Replicas: 1, AllowFewerReplicas: true}); err != nil {
		t.Fatalf("Open with 1 replica, allowed: %v", err)
	}
}

// TestCheckServers: the test cluster (sync_interval: always) passes, a
// server with the default sync interval is refused by name, over HTTP and
// over the system account alike.
func TestCheckServers(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	good, err := FetchServerSettings(ctx, cluster.MonitorURLs())
	if err != nil {
		t.Fatal(err)
	}
	if len(good) != 3 || good[0].ClusterSize != 3 {
		t.Fatalf("settings %+v, want 3 servers of a 3-server meta group", good)
	}
	if err := CheckServers(good); err != nil {
		t.Fatalf("the sync-always cluster is refused: %v", err)
	}

	lazy := startServer(t, func(o *server.Options) {})
	settings, err := FetchServerSettings(ctx, []string{"http://" + lazy.MonitorAddr().String()})
	if err != nil {
		t.Fatal(err)
	}
	err = CheckServers(settings)
	if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "sync_interval") || !strings.Contains(err.Error(), "server lazy") {
		t.Fatalf("default sync interval: err = %v, want a refusal naming sync_interval on server lazy", err)
	}
	if !strings.Contains(err.Error(), "sync_interval: always") {
		t.Fatalf("the refusal %q does not say what to set", err)
	}

	noJS := startServer(t, func(o *server.Options) { o.JetStream = false })
	settings, err = FetchServerSettings(ctx, []string{"http://" + noJS.MonitorAddr().String()})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckServers(settings); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "jetstream is disabled") {
		t.Fatalf("no JetStream: err = %v", err)
	}
}

func TestFetchServerSettingsSys(t *testing.T) {
	s := startServer(t, func(o *server.Options) {
		sys := server.NewAccount("SYS")
		o.Accounts = []*server.Account{sys}
		o.SystemAccount = "SYS"
		o.Users = []*server.User{{Username: "sys", Password: "pw", Account: sys}}
	})
	nc := connectTo(t, s, "sys", "pw")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	settings, err := FetchServerSettingsSys(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	if len(settings) != 1 || settings[0].Name != "lazy" || settings[0].SyncAlways || !settings[0].JetStream {
		t.Fatalf("settings over $SYS: %+v", settings)
	}
	if err := CheckServers(settings); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("default sync interval over $SYS: err = %v", err)
	}
}

// startServer starts one server named lazy with JetStream at the default
// sync interval and a monitoring port.
func startServer(t *testing.T, adjust func(*server.Options)) *server.Server {
	t.Helper()
	o := &server.Options{ServerName: "lazy", Host: "127.0.0.1", Port: -1, HTTPHost: "127.0.0.1", HTTPPort: -1,
		NoLog: true, NoSigs: true, JetStream: true, StoreDir: t.TempDir()}
	adjust(o)
	s, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server did not start")
	}
	return s
}

// TestOpenWaitsForPlacementAndSaysWhatToCheck: more replicas than the
// cluster has servers is what a cluster still forming answers too; Open
// asks again until its context ends, then says what to check.
func TestOpenWaitsForPlacementAndSaysWhatToCheck(t *testing.T) {
	nc := cluster.Connect(t)
	// Long enough for the first requests' answers on a loaded machine:
	// the error must be the servers', not the deadline's alone.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	_, err := Open(ctx, nc, Options{Prefix: "unplaced", Partitions: 1, Replicas: 5})
	if !jsplace.IsNoPeers(err) || !strings.Contains(err.Error(), "fewer than 5 JetStream servers") {
		t.Fatalf("Open with 5 replicas on 3 servers: err = %v; want no suitable peers and what to check", err)
	}
}
