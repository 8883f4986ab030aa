// Package e2e runs jido-bus the way users do: the real binary, started as
// `jido-bus serve` in a child process, driven by the real NATS CLI. It holds
// the harness; the tests are in the _test files.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// Tools are the binaries a test drives.
type Tools struct {
	JidoBus string // the jido-bus binary, built from this checkout
	NATS    string // the NATS CLI, at the version pinned in tools/go.mod

	root  string   // the checkout
	goEnv []string // the go command's caches, as they were before Isolate
}

// BuildProgram builds the package pkg of the checkout (./examples/agent)
// into dir and returns the binary. It uses the go command's caches of the
// user who runs the tests: the isolated HOME of the tests has none, and a
// build there would compile every dependency again.
func (t Tools) BuildProgram(dir, pkg string) (string, error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = t.root
	cmd.Env = append(os.Environ(), t.goEnv...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// NATSCLIEnv names the NATS CLI the tests use (`make test` gives its
// bin/nats); without it Build builds one into the user's cache.
const NATSCLIEnv = "JIDO_NATS_CLI"

// Build builds jido-bus into dir and finds the NATS CLI: $JIDO_NATS_CLI,
// else a build of the pinned tools module kept in the user's cache
// directory (by the hash of tools/go.sum, so a new pin builds anew).
// Nothing is written into the checkout.
func Build(dir string) (Tools, error) {
	root, err := moduleRoot()
	if err != nil {
		return Tools{}, err
	}
	t := Tools{JidoBus: filepath.Join(dir, "jido-bus"), NATS: os.Getenv(NATSCLIEnv), root: root}
	if err := run(root, "go", "build", "-o", t.JidoBus, "./cmd/jido-bus"); err != nil {
		return Tools{}, err
	}
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		return Tools{}, fmt.Errorf("go env: %w", err)
	}
	if v := strings.Split(strings.TrimSpace(string(out)), "\n"); len(v) == 3 {
		t.goEnv = []string{"GOCACHE=" + v[0], "GOMODCACHE=" + v[1], "GOPATH=" + v[2]}
	}
	if t.NATS != "" {
		if _, err := os.Stat(t.NATS); err != nil {
			return Tools{}, fmt.Errorf("%s=%s: %w (make tools builds it)", NATSCLIEnv, t.NATS, err)
		}
		return t, nil
	}
	if t.NATS, err = cachedNATSCLI(root); err != nil {
		return Tools{}, fmt.Errorf("build the NATS CLI (or set %s to one, as make test does): %w", NATSCLIEnv, err)
	}
	return t, nil
}

// cachedNATSCLI returns the NATS CLI built from root's tools module into
// the user's cache directory, building it when it is not there yet.
func cachedNATSCLI(root string) (string, error) {
	sum, err := os.ReadFile(filepath.Join(root, "tools", "go.sum"))
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "jido-bus", fmt.Sprintf("natscli-%x", sha256.Sum256(sum))[:len("natscli-")+16])
	bin := filepath.Join(dir, "nats")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Built beside, then renamed: a concurrent run sees the whole binary
	// or none.
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := run(filepath.Join(root, "tools"), "go", "build", "-o", filepath.Join(tmp, "nats"), "github.com/nats-io/natscli/nats"); err != nil {
		return "", err
	}
	return bin, os.Rename(filepath.Join(tmp, "nats"), bin)
}

// Isolate makes this process, and so every child a test starts, run in a
// directory of its own under dir with no NATS settings of the user's: no
// NATS_* variable, no saved or selected NATS context, no ./data of the
// checkout. A command that names no node and no data directory then
// reaches only what a test set up — or the default address, which a test
// must not rely on (another node may listen there).
func Isolate(dir string) error {
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "NATS_") {
			if err := os.Unsetenv(k); err != nil {
				return err
			}
		}
	}
	for k, v := range map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "XDG_DATA_HOME": filepath.Join(home, ".local", "share")} {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return os.Chdir(work)
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "tools", "go.mod")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("e2e: cannot find the repository root (go.mod beside tools/go.mod)")
		}
		dir = parent
	}
}

func run(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// Node is a `jido-bus serve` child process.
type Node struct {
	URL     string // the NATS URL it listens on
	DataDir string

	tools Tools
	cmd   *exec.Cmd
	logs  *testkit.Buffer
	done  chan struct{}
	err   error // the process's exit, once done is closed
}

// StartNode runs `jido-bus serve` on a free loopback port with dataDir and
// extra flags, and waits until it says it is ready. The node is killed when
// tb ends if the test has not stopped it.
func StartNode(tb testing.TB, tools Tools, dataDir string, extra ...string) *Node {
	tb.Helper()
	return StartNodeVia(tb, tools, nil, dataDir, extra...)
}

// StartNodeVia is StartNode with the binary run through the command via
// (e.g. "ip netns exec NAME"), when via is not empty.
func StartNodeVia(tb testing.TB, tools Tools, via []string, dataDir string, extra ...string) *Node {
	tb.Helper()
	args := []string{"serve", "--data-dir", dataDir, "--log-format", "json", "--log-level", "debug"}
	if !slices.Contains(extra, "--nats-url") {
		args = append(args, "--listen", "127.0.0.1:0")
	}
	args = append(args, extra...)
	n := &Node{DataDir: dataDir, tools: tools, logs: &testkit.Buffer{}, done: make(chan struct{})}
	if len(via) > 0 {
		args = append(append(via[1:len(via):len(via)], tools.JidoBus), args...)
		n.cmd = exec.Command(via[0], args...)
	} else {
		n.cmd = exec.Command(tools.JidoBus, args...)
	}
	stderr, err := n.cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := n.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			n.logs.Write(append(line, '\n'))
			var rec struct {
				Msg  string `json:"msg"`
				NATS string `json:"nats"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.Msg == "jido-bus ready" {
				select {
				case ready <- rec.NATS:
				default:
				}
			}
		}
		n.err = n.cmd.Wait()
		close(n.done)
	}()
	tb.Cleanup(func() {
		select {
		case <-n.done:
		default:
			_ = n.cmd.Process.Kill()
			<-n.done
		}
		if tb.Failed() {
			tb.Logf("jido-bus serve log:\n%s", n.logs.String())
		}
	})
	select {
	case n.URL = <-ready:
	case <-n.done:
		tb.Fatalf("jido-bus serve exited before it was ready: %v\n%s", n.err, n.logs.String())
	case <-time.After(60 * time.Second):
		tb.Fatalf("jido-bus serve not ready after 60s:\n%s", n.logs.String())
	}
	return n
}

// Logs returns what the node has logged so far.
func (n *Node) Logs() string { return n.logs.String() }

// Stop sends SIGTERM and returns the process's exit error (nil for exit 0).
func (n *Node) Stop(tb testing.TB) error {
	tb.Helper()
	return n.signal(tb, syscall.SIGTERM)
}

// Exited waits up to timeout for the process to exit by itself and
// returns its exit code (-1 when it did not exit in time, the test having
// failed then).
func (n *Node) Exited(tb testing.TB, timeout time.Duration) int {
	tb.Helper()
	select {
	case <-n.done:
		if ee, ok := errors.AsType[*exec.ExitError](n.err); ok {
			return ee.ExitCode()
		}
		if n.err != nil {
			tb.Fatalf("jido-bus serve: %v", n.err)
		}
		return 0
	case <-time.After(timeout):
		tb.Errorf("jido-bus serve still running after %s", timeout)
		return -1
	}
}

// Kill sends SIGKILL, the crash a durable log must survive.
func (n *Node) Kill(tb testing.TB) {
	tb.Helper()
	_ = n.signal(tb, syscall.SIGKILL)
}

func (n *Node) signal(tb testing.TB, sig syscall.Signal) error {
	tb.Helper()
	if err := n.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		tb.Fatal(err)
	}
	select {
	case <-n.done:
		return n.err
	case <-time.After(30 * time.Second):
		tb.Fatalf("jido-bus serve still running 30s after %v", sig)
		return nil
	}
}

// NATS runs the NATS CLI against the node and returns its standard output.
func (n *Node) NATS(tb testing.TB, args ...string) string {
	tb.Helper()
	out, err := n.TryNATS(args...)
	if err != nil {
		tb.Fatalf("nats %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// TryNATS is NATS returning the error instead of failing the test.
func (n *Node) TryNATS(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, n.tools.NATS, append([]string{"--server", n.URL, "--timeout", "10s"}, args...)...)
	cmd.Env = natsCLIEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%w: %s", err, stderr.String())
	}
	return stdout.String(), nil
}

// StartNATS starts a long-running NATS CLI command (a subscription) and
// returns a buffer with its output so far and a function that waits for it
// to exit by itself (as `nats sub --count N` does).
func (n *Node) StartNATS(tb testing.TB, args ...string) (out *testkit.Buffer, wait func() error) {
	tb.Helper()
	cmd := exec.Command(n.tools.NATS, append([]string{"--server", n.URL}, args...)...)
	cmd.Env = natsCLIEnv()
	out = &testkit.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	return out, func() error {
		select {
		case err := <-done:
			done <- err
			return err
		case <-time.After(30 * time.Second):
			return fmt.Errorf("nats %s still running after 30s; output:\n%s", strings.Join(args, " "), out.String())
		}
	}
}

// natsCLIEnv keeps the CLI away from a user's saved contexts, so a test
// talks to its own node only.
func natsCLIEnv() []string {
	home, _ := os.MkdirTemp("", "nats-cli-home")
	return append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "NATS_CONTEXT=")
}

// Run runs the jido-bus CLI (not serve) and returns its standard output.
func (t Tools) Run(tb testing.TB, args ...string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.JidoBus, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("jido-bus %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}
