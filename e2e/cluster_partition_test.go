package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus/natsserver/jstest"
)

// netns is a network namespace joined to this one by a veth pair: the
// host side's address is hostIP, the namespace's nsIP.
type netns struct {
	name, hostLink string
	hostIP, nsIP   string
}

// newNetns makes a network namespace with a veth link to this one, or
// skips the test when this machine cannot (not root, no ip command, no
// network namespaces): making one needs CAP_NET_ADMIN.
func newNetns(t *testing.T) *netns {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("cutting a node off needs network namespaces, which need root: run the e2e tests as root to include it")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("cutting a node off needs the ip command (iproute2): install it to include this test")
	}
	id := os.Getpid() % 60000
	n := &netns{
		name:     fmt.Sprintf("jbtest%d", id),
		hostLink: fmt.Sprintf("jbh%d", id),
		hostIP:   fmt.Sprintf("10.%d.%d.1", 200+id/250%50, id%250),
		nsIP:     fmt.Sprintf("10.%d.%d.2", 200+id/250%50, id%250),
	}
	nsLink := fmt.Sprintf("jbn%d", id)
	ip := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := ip("netns", "add", n.name); err != nil {
		t.Skipf("this machine cannot make a network namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = ip("link", "del", n.hostLink)
		_ = ip("netns", "del", n.name)
	})
	for _, args := range [][]string{
		{"link", "add", n.hostLink, "type", "veth", "peer", "name", nsLink},
		{"link", "set", nsLink, "netns", n.name},
		{"addr", "add", n.hostIP + "/30", "dev", n.hostLink},
		{"link", "set", n.hostLink, "up"},
		{"-n", n.name, "addr", "add", n.nsIP + "/30", "dev", nsLink},
		{"-n", n.name, "link", "set", nsLink, "up"},
		{"-n", n.name, "link", "set", "lo", "up"},
	} {
		if err := ip(args...); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// cut takes the link down (up false) or brings it back.
func (n *netns) link(t *testing.T, up bool) {
	t.Helper()
	state := "down"
	if up {
		state = "up"
	}
	if out, err := exec.Command("ip", "link", "set", n.hostLink, state).CombinedOutput(); err != nil {
		t.Fatalf("ip link set %s %s: %v: %s", n.hostLink, state, err, out)
	}
}

// A node cut off from the NATS cluster (its link down) loses its
// partitions to the other node within the lease and, cut off, decides
// nothing; when the link is back it rejoins and takes its share again by
// hand-over. Every acknowledged increment is in the log exactly once.
func TestClusterNodeCutOffRejoins(t *testing.T) {
	ns := newNetns(t)
	c := jstest.StartCluster(t, 3, func(_ int, o *server.Options) {
		// Clients and monitoring on the veth's host address, which the
		// namespace reaches and this side reaches locally; routes stay on
		// loopback.
		o.Host, o.HTTPHost = ns.hostIP, ns.hostIP
	})
	var urls, monitor []string
	for _, s := range c.Servers {
		urls = append(urls, fmt.Sprintf("nats://%s:%d", ns.hostIP, s.Addr().(*net.TCPAddr).Port))
		monitor = append(monitor, "http://"+s.MonitorAddr().String())
	}
	nc := natsCluster{c, strings.Join(urls, ","), strings.Join(monitor, ",")}
	cut := StartNodeVia(t, tools, []string{"ip", "netns", "exec", ns.name}, t.TempDir(), clusterArgs(nc, "n1")...)
	other := clusterNode(t, nc, "n2", t.TempDir())

	client := c.Connect(t, nats.MaxReconnects(-1))
	a := newAcker(t, client)
	ids := make([]string, 12)
	for i := range ids {
		ids[i] = fmt.Sprintf("p%d", i)
		a.start(ids[i])
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { defer close(done); a.load(ids, stop) }()
	a.waitRounds(3)
	ns.link(t, false)
	a.waitRounds(3) // every counter answers: n2 took n1's partitions
	ns.link(t, true)
	a.waitRounds(6)
	close(stop)
	<-done

	a.verifyAll(ids)
	if !strings.Contains(cut.Logs(), `"reason":"fenced"`) && !strings.Contains(cut.Logs(), `"reason":"lost"`) {
		t.Errorf("the node cut off never gave its partitions up:\n%s", cut.Logs())
	}
	if err := other.Stop(t); err != nil {
		t.Errorf("n2 stop: %v", err)
	}
	if err := cut.Stop(t); err != nil {
		t.Errorf("n1 stop: %v", err)
	}
}
