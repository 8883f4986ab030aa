// Package jstest starts in-process NATS clusters with JetStream for tests:
// n servers on 127.0.0.1 joined by routes, each with its JetStream store in
// a temporary directory, fsyncing every write (sync_interval: always) as
// cluster mode requires.
package jstest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Cluster is a running set of routed servers with JetStream.
type Cluster struct {
	Servers []*server.Server
	opts    []*server.Options // each server's, for Restart
}

// StartCluster starts n servers named s1…sn in one cluster, waits until
// JetStream has a meta leader every server follows, and shuts them down
// (waiting for each) when tb ends. opts adjust each server's options
// (index i, from 0) before it starts.
func StartCluster(tb testing.TB, n int, opts ...func(i int, o *server.Options)) *Cluster {
	tb.Helper()
	c, err := Start(n, tb.TempDir, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// Start is StartCluster for a TestMain, which has no testing.TB: tempDir
// makes each server's store directory, and the caller calls Close.
func Start(n int, tempDir func() string, opts ...func(i int, o *server.Options)) (*Cluster, error) {
	// Every server names every route so that each knows the cluster's size
	// from the start (a server that learns of its peers only by gossip
	// guesses a smaller JetStream meta group). The route ports come from
	// the kernel (port 0) and are released just before the servers bind
	// them again.
	ports, err := freePorts(n)
	if err != nil {
		return nil, err
	}
	routes := make([]*url.URL, n)
	for i, p := range ports {
		routes[i] = &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", p)}
	}
	c := &Cluster{}
	for i := range n {
		o := &server.Options{
			ServerName: fmt.Sprintf("s%d", i+1),
			Host:       "127.0.0.1",
			Port:       -1,
			HTTPHost:   "127.0.0.1",
			HTTPPort:   -1,
			NoLog:      true,
			NoSigs:     true,
			JetStream:  true,
			StoreDir:   tempDir(),
			SyncAlways: true,
			Cluster: server.ClusterOpts{
				Name: "jstest",
				Host: "127.0.0.1",
				Port: ports[i],
			},
			Routes: routes,
		}
		for _, f := range opts {
			f(i, o)
		}
		s, err := server.NewServer(o)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("jstest: server %d: %w", i+1, err)
		}
		s.Start()
		c.Servers = append(c.Servers, s)
		c.opts = append(c.opts, o)
	}
	for i, s := range c.Servers {
		if !s.ReadyForConnections(10 * time.Second) {
			c.Close()
			return nil, fmt.Errorf("jstest: %s did not accept connections", s.Name())
		}
		// A restarted server comes back on the ports it had.
		if addr, ok := s.Addr().(*net.TCPAddr); ok {
			c.opts[i].Port = addr.Port
		}
		if addr := s.MonitorAddr(); addr != nil {
			c.opts[i].HTTPPort = addr.Port
		}
	}
	if err := c.waitForMeta(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Restart starts server i again, after it was shut down, on the same
// ports and store directory, and waits until it accepts connections: a
// server that crashed and came back.
func (c *Cluster) Restart(i int) error {
	old := c.Servers[i]
	old.Shutdown()
	old.WaitForShutdown()
	o := c.opts[i].Clone()
	s, err := server.NewServer(o)
	if err != nil {
		return fmt.Errorf("jstest: restart server %d: %w", i+1, err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return fmt.Errorf("jstest: restarted %s did not accept connections", s.Name())
	}
	c.Servers[i] = s
	return nil
}

// Close stops every server and waits for each, as the embedded server's
// Close does: a server's stop has nothing left to wait for once
// WaitForShutdown returns, so it takes no context. It returns nil.
func (c *Cluster) Close() error {
	for _, s := range c.Servers {
		s.Shutdown()
		s.WaitForShutdown()
	}
	return nil
}

// waitForMeta waits until a JetStream meta leader is elected, every
// server is current with it, and the leader has heard every server's
// statistics: only then is a stream of n replicas placed. A leader that
// has not yet had a peer's statistics leaves it out of placement and
// answers a creation "no suitable peers for placement" (CI saw it on a
// loaded machine).
func (c *Cluster) waitForMeta() error {
	// Elections and statistics run on the servers' own timers and announce
	// nothing a caller outside can wait on, so poll the state.
	err := testkit.Poll(30*time.Second, func() error {
		ready, placeable := true, false
		for _, s := range c.Servers {
			if !s.JetStreamEnabled() || !s.JetStreamIsCurrent() {
				ready = false
			}
			// Only the leader answers; it lists the peers it would place on.
			if s.JetStreamIsLeader() && len(s.JetStreamClusterPeers()) == len(c.Servers) {
				placeable = true
			}
		}
		if !ready || !placeable {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("jstest: after 30s the cluster of %d has no JetStream meta leader that can place on every server; the cluster did not form", len(c.Servers))
	}
	return nil
}

// URLs is the client URLs of every server, comma-separated, as nats.Connect
// takes them.
func (c *Cluster) URLs() string {
	u := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		u[i] = s.ClientURL()
	}
	return strings.Join(u, ",")
}

// MonitorURLs is each server's HTTP monitoring base URL (/varz beneath).
func (c *Cluster) MonitorURLs() []string {
	u := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		u[i] = fmt.Sprintf("http://%s", s.MonitorAddr())
	}
	return u
}

// Connect opens a client connection to the whole cluster, closed when tb
// ends. It reconnects without limit, since tests stop and step down
// servers under it.
func (c *Cluster) Connect(tb testing.TB, opts ...nats.Option) *nats.Conn {
	tb.Helper()
	opts = append([]nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(20 * time.Millisecond)}, opts...)
	nc, err := nats.Connect(c.URLs(), opts...)
	if err != nil {
		tb.Fatalf("jstest: connect to %s: %v", c.URLs(), err)
	}
	tb.Cleanup(nc.Close)
	return nc
}

func freePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, n)
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("jstest: reserve a route port: %w", err)
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}
