package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/node"
)

// mainEnv, set in a child's environment, makes the test binary run main()
// instead of the tests: the child is then the jido-bus binary itself,
// exit code and standard error included.
const mainEnv = "JIDO_BUS_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Args = append([]string{"jido-bus"}, strings.Fields(os.Getenv(mainEnv+"_ARGS"))...)
		main()
		os.Exit(0)
	}
	// A command told no --data-dir uses the user's (defaultDataDir): never
	// the real one from a test.
	home, err := os.MkdirTemp("", "jido-bus-cmd-test")
	if err == nil {
		err = os.Setenv("XDG_DATA_HOME", home)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// runBinary runs the jido-bus binary (this test binary running main) with
// args and returns its exit code and standard error.
func runBinary(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainEnv+"=1", mainEnv+"_ARGS="+strings.Join(args, " "))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stderr.String()
	}
	t.Fatalf("run jido-bus %v: %v", args, err)
	return 0, ""
}

// TestServeStartupErrors: `jido-bus serve` that cannot start exits
// non-zero with a sentence saying why and what to do, not a panic's
// goroutine dump.
func TestServeStartupErrors(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	held := t.TempDir()
	n, err := node.Start(context.Background(), node.Config{DataDir: held, NATS: node.NATSConfig{Listen: "127.0.0.1:0"}, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown(context.Background())
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.Addr().String()
	free.Close()

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"port in use", []string{"serve", "--data-dir", t.TempDir(), "--listen", taken.Addr().String()}, "is another server using the port?"},
		{"data dir in use", []string{"serve", "--data-dir", held, "--listen", "127.0.0.1:0"}, "is in use by another jido-bus process"},
		{"nothing at --nats-url", []string{"serve", "--data-dir", t.TempDir(), "--nats-url", "nats://" + freeAddr}, "is the server running?"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stderr := runBinary(t, append(c.args, "--log-level", "error")...)
			if code == 0 {
				t.Fatalf("exit code 0; stderr:\n%s", stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("stderr does not say %q:\n%s", c.want, stderr)
			}
			for _, bad := range []string{"panic", "goroutine "} {
				if strings.Contains(stderr, bad) {
					t.Errorf("stderr holds %q:\n%s", bad, stderr)
				}
			}
		})
	}
}
