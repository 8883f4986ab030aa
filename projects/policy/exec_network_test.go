//go:build linux

package policy

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// network: false is a network namespace with nothing in it (issue 20,
// item 3): no UDP datagram leaves, and no unix socket outside the project
// is reached (the command's view does not hold it), whatever this
// kernel's Landlock can refuse.
func TestExecNoNetworkMeansNone(t *testing.T) {
	defer goleak.VerifyNone(t)
	needNamespaces(t)
	f := newFixture(t)
	exe, err := os.Executable()
	must(t, err)
	exe, err = filepath.EvalSymlinks(exe)
	must(t, err)
	policy := "commands:\n  programs: [" + exe + "]\n"

	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	must(t, err)
	defer udp.Close()
	sock := filepath.Join(t.TempDir(), "s.sock")
	ux, err := net.Listen("unix", sock)
	must(t, err)
	defer ux.Close()
	abstract, err := net.Listen("unix", "@jido-test-"+filepath.Base(t.TempDir()))
	must(t, err)
	defer abstract.Close()

	for _, target := range [][2]string{{"udp", udp.LocalAddr().String()}, {"unix", sock}, {"unix", abstract.Addr().String()}} {
		res, err := execIn(t, context.Background(), f.proj, policy, ExecOptions{}, exe, probeArg, "dial", target[0], target[1])
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 1 || !strings.Contains(string(res.Stderr), "probe:") {
			t.Errorf("%s %s reached from a command without network: exit %d %s %s", target[0], target[1], res.ExitCode, res.Stdout, res.Stderr)
		}
	}
	// The first datagram the listener gets is the test's own, sent after
	// the command's.
	self, err := net.Dial("udp", udp.LocalAddr().String())
	must(t, err)
	defer self.Close()
	_, err = self.Write([]byte("from-test"))
	must(t, err)
	buf := make([]byte, 64)
	udp.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, _, err := udp.ReadFrom(buf)
	if err != nil || string(buf[:n]) != "from-test" {
		t.Errorf("the UDP listener got %q (%v) first, want the test's own datagram", buf[:n], err)
	}

	// The listeners work: with network: true a datagram goes through.
	res, err := execIn(t, context.Background(), f.proj, policy+"  network: true\n", ExecOptions{}, exe, probeArg, "dial", "udp", udp.LocalAddr().String())
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("with network: true: %+v %v", res, err)
	}
	n, _, err = udp.ReadFrom(buf)
	if err != nil || string(buf[:n]) != "from-sandbox" {
		t.Errorf("with network: true the listener got %q (%v)", buf[:n], err)
	}
}
