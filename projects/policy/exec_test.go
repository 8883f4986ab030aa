//go:build linux

package policy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain lets the test binary stand in for jido-bus: run with HelperArg
// it is the sandbox-exec helper (Exec re-executes os.Executable()), and
// with probeArg it is a program the tests run inside the sandbox.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case HelperArg:
			os.Exit(HelperMain())
		case probeArg:
			os.Exit(probe(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}

const probeArg = "policy-test-probe"

// probe does one thing inside the sandbox: "dial NETWORK ADDR" connects
// (tcp, unix) or sends a datagram (udp) and says "connected", or fails
// saying "probe:".
func probe(args []string) int {
	if len(args) == 3 && args[0] == "dial" {
		c, err := net.Dial(args[1], args[2])
		if err == nil {
			_, err = c.Write([]byte("from-sandbox"))
			c.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
			return 1
		}
		fmt.Println("connected")
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown probe", args)
	return 2
}

func needLandlock(t *testing.T, need func(Confinement) bool) {
	t.Helper()
	if c := Protection(); !need(c) {
		t.Skipf("this kernel cannot confine commands this way (%s); the test needs Landlock (ABI 1+, ABI 4+ for the network)", c)
	}
}

// execIn builds argv's spec in proj under a policy listing programs and runs it.
func execIn(t *testing.T, ctx context.Context, proj, policy string, opts ExecOptions, argv ...string) (*CommandResult, error) {
	t.Helper()
	sb := openSandbox(t, proj, policy)
	spec, err := sb.Command("run_command", CommandRequest{Argv: argv}, []string{"PATH=/usr/bin:/bin"})
	if err != nil {
		t.Fatalf("Command(%q): %v", argv, err)
	}
	return Exec(ctx, spec, opts)
}

const shPolicy = "commands:\n  programs: [sh, head]\n"

func TestExecWritesInsideTheRoot(t *testing.T) {
	defer goleak.VerifyNone(t)
	needLandlock(t, func(c Confinement) bool { return c.TCP })
	f := newFixture(t)
	res, err := execIn(t, context.Background(), f.proj, shPolicy, ExecOptions{},
		"sh", "-c", `echo made > sub.txt && mkdir -p d && mv sub.txt d/ && echo "$HOME" && echo warn >&2 && touch "$TMPDIR/t" && exit 3`)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || strings.TrimSpace(string(res.Stdout)) != f.proj || strings.TrimSpace(string(res.Stderr)) != "warn" {
		t.Errorf("exit %d stdout %q stderr %q; want 3, the root as HOME, warn", res.ExitCode, res.Stdout, res.Stderr)
	}
	if b, err := os.ReadFile(filepath.Join(f.proj, "d", "sub.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("d/sub.txt: %q %v", b, err)
	}
}

func TestExecCannotWriteOutsideTheRoot(t *testing.T) {
	defer goleak.VerifyNone(t)
	needLandlock(t, func(c Confinement) bool { return c.TCP })
	f := newFixture(t)
	other := t.TempDir() // a sibling under the same /tmp
	for _, target := range []string{
		filepath.Join(f.outside, "new"), filepath.Join(f.evil, "secret"), filepath.Join(other, "new"),
		filepath.Join(f.proj, "out", "via-link"), // a link inside the root that points out
	} {
		res, err := execIn(t, context.Background(), f.proj, shPolicy, ExecOptions{}, "sh", "-c", `echo pwned > "$1"`, "sh", target)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 {
			t.Errorf("writing %s exited 0", target)
		}
		if b, err := os.ReadFile(target); err == nil && string(b) == "pwned\n" {
			t.Errorf("the command wrote %s outside the root", target)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.evil, "secret")); string(b) != "SECRET" {
		t.Errorf("proj-evil/secret is now %q", b)
	}
}

func TestExecNetwork(t *testing.T) {
	defer goleak.VerifyNone(t)
	needLandlock(t, func(c Confinement) bool { return c.TCP })
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	exe, err := os.Executable()
	must(t, err)
	exe, err = filepath.EvalSymlinks(exe)
	must(t, err)
	policy := "commands:\n  programs: [" + exe + "]\n"

	res, err := execIn(t, context.Background(), f.proj, policy, ExecOptions{}, exe, probeArg, "dial", "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 {
		t.Errorf("the command connected to %s without network: %s", ln.Addr(), res.Stdout)
	}
	ln.(*net.TCPListener).SetDeadline(time.Now())
	if c, err := ln.Accept(); err == nil {
		c.Close()
		t.Errorf("the listener got a connection from a command without network")
	}

	// The policy's network: true lets it through (and shows the probe works).
	ln.(*net.TCPListener).SetDeadline(time.Time{})
	res, err = execIn(t, context.Background(), f.proj, policy+"  network: true\n", ExecOptions{}, exe, probeArg, "dial", "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Errorf("with network: true the probe failed: %s", res.Stderr)
	}
}

func TestExecDeadline(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res, err := execIn(t, ctx, f.proj, shPolicy+"  without_landlock: warn\n", ExecOptions{}, "sh", "-c", "sleep 100")
	if !errors.Is(err, context.DeadlineExceeded) || res == nil || res.Killed != "deadline" || res.Signal != syscall.SIGKILL.String() {
		t.Fatalf("got %+v, %v; want killed at the deadline", res, err)
	}
}

func killed(res *CommandResult) string {
	if res == nil {
		return "<no result>"
	}
	return res.Killed
}

func TestExecOutputCap(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newFixture(t)
	const max = 1 << 20
	res, err := execIn(t, context.Background(), f.proj, shPolicy+"  without_landlock: warn\n", ExecOptions{MaxOutput: max},
		"head", "-c", "104857600", "/dev/zero")
	if err == nil || res == nil || res.Killed != "output_limit" {
		t.Fatalf("got killed %q, %v; want killed at the output limit", killed(res), err)
	}
	wantType(t, err, "too_large")
	if n := len(res.Stdout) + len(res.Stderr); n != max {
		t.Errorf("kept %d bytes, want the cap %d", n, max)
	}
}
