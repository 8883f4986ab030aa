package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// The user's Go settings as they were when the test binary started, before
// Isolate moved HOME: make run's go commands need the real module and build
// caches (a cold build, or no module at all, otherwise).
var (
	startHome      = os.Getenv("HOME")
	startXDGConfig = os.Getenv("XDG_CONFIG_HOME")
	// startDir is the package's directory, inside the checkout (Isolate
	// then moves the working directory out of it).
	startDir, _ = os.Getwd()
)

// goEnv returns the Go settings make must run with: GOCACHE, GOMODCACHE,
// GOPATH, GOFLAGS and the proxy's, read with the user's own HOME.
func goEnv(t *testing.T) []string {
	t.Helper()
	names := []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GONOPROXY", "GOPRIVATE", "GOTOOLCHAIN"}
	cmd := exec.Command("go", append([]string{"env", "-json"}, names...)...)
	cmd.Env = append(os.Environ(), "HOME="+startHome, "XDG_CONFIG_HOME="+startXDGConfig)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	var vals map[string]string
	if err := json.Unmarshal(out, &vals); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, k := range names {
		env = append(env, k+"="+vals[k])
	}
	return env
}

// newcomerCheckout copies this checkout's sources, as a fresh clone has
// them (no bin/, no data of a make run, no .git), into a new directory.
func newcomerCheckout(t *testing.T) string {
	t.Helper()
	root := filepath.Dir(startDir)
	if _, err := os.Stat(filepath.Join(root, "tools", "go.mod")); err != nil {
		t.Fatalf("the checkout above %s: %v", startDir, err)
	}
	dst := filepath.Join(t.TempDir(), "jido-bus")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if d.IsDir() && (top == ".git" || top == "bin" || strings.HasPrefix(top, "data") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		case !d.Type().IsRegular() || top == ".git":
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(filepath.Join(dst, rel))
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// makeRun is `make run` in a checkout, with its output.
type makeRun struct {
	dataHome string // its XDG_DATA_HOME
	out      *testkit.Buffer
	exited   chan error
	nats     string // the node's URL, once ready
}

// startMakeRun runs `make run` in checkout with NATS and HTTP on free
// loopback ports and XDG_DATA_HOME in a directory of its own, and waits
// for the node to be ready. bin/ gets this test's binaries, so make only
// runs its recipe (what a newcomer's build produces is built from the same
// sources). The node is stopped (SIGTERM to make's process group) when the
// test ends.
func startMakeRun(t *testing.T, checkout string, vars ...string) *makeRun {
	t.Helper()
	bin := filepath.Join(checkout, "bin")
	for dst, src := range map[string]string{"jido-bus": tools.JidoBus, "nats": tools.NATS} {
		copyFile(t, src, filepath.Join(bin, dst), 0o755)
	}
	r := &makeRun{dataHome: t.TempDir(), out: &testkit.Buffer{}, exited: make(chan error, 1)}
	args := append([]string{"-o", "build", "run", "LISTEN=127.0.0.1:0", "HTTP=127.0.0.1:0"}, vars...)
	cmd := exec.Command("make", args...)
	cmd.Dir = checkout
	cmd.Env = append(append(os.Environ(), goEnv(t)...), "XDG_DATA_HOME="+r.dataHome)
	cmd.Stdout, cmd.Stderr = r.out, r.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-r.exited
		}
		if t.Failed() {
			t.Logf("make run:\n%s", r.out.String())
		}
	})
	ready := regexp.MustCompile(`msg="jido-bus ready" nats=(\S+)`)
	testkit.Eventually(t, "make run to start the node", func() bool {
		select {
		case err := <-r.exited:
			t.Fatalf("make run exited: %v\n%s", err, r.out.String())
		default:
		}
		if m := ready.FindStringSubmatch(r.out.String()); m != nil {
			r.nats = m[1]
			return true
		}
		return false
	})
	return r
}

// logged returns the value of key in the first line of make run's output
// holding every one of match.
func (r *makeRun) logged(t *testing.T, key string, match ...string) string {
	t.Helper()
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(key) + `=(\S+)`)
	for line := range strings.SplitSeq(r.out.String(), "\n") {
		all := true
		for _, m := range match {
			all = all && strings.Contains(line, m)
		}
		if sub := re.FindStringSubmatch(line); all && sub != nil {
			return sub[1]
		}
	}
	t.Fatalf("make run printed no %s= on a line with %q:\n%s", key, match, r.out.String())
	return ""
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, mode); err != nil {
		t.Fatal(err)
	}
}

// cliIn runs the jido-bus CLI in dir against the node at url.
func cliIn(t *testing.T, dir, url string, stdin string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(tools.JidoBus, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NATS_URL="+url)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("jido-bus %s: still running after 60s\n%s\n%s", strings.Join(args, " "), stdout.String(), stderr.String())
	}
	r := cliResult{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestNewcomerMakeRun is a newcomer's first hour from a fresh checkout:
// make run starts a node with the demo open, its data outside the
// checkout, and the MCP and A2A gateways on loopback with their URLs
// printed (issue 21, items 2 and 3); the checkout itself then opens as a
// project (it was refused: the node's ./data was inside it); and the
// demo's scripted model answers for as long as one chats (item 5: the
// third message failed the conversation, "the llm script has 5 turns").
func TestNewcomerMakeRun(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is needed")
	}
	checkout := newcomerCheckout(t)
	run := startMakeRun(t, checkout)

	// Item 3: the data lives under $XDG_DATA_HOME/jido-bus, none in the
	// checkout, and the checkout opens as a project.
	for _, dir := range []string{"node/log", "demo/hello.go"} {
		if _, err := os.Stat(filepath.Join(run.dataHome, "jido-bus", dir)); err != nil {
			t.Errorf("make run keeps no %s under $XDG_DATA_HOME/jido-bus: %v", dir, err)
		}
	}
	if st, err := os.Stat(filepath.Join(run.dataHome, "jido-bus")); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("$XDG_DATA_HOME/jido-bus is not its user's only: %v %v", st.Mode(), err)
	}
	entries, _ := os.ReadDir(checkout)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "data") {
			t.Errorf("make run wrote %s into the checkout", e.Name())
		}
	}
	open := cliIn(t, checkout, run.nats, "", "project", "open", ".", "--id", "app")
	if open.code != 0 || !regexp.MustCompile(`ROOT: +`+regexp.QuoteMeta(checkout)+`\n`).MatchString(open.stdout) {
		t.Fatalf("project open . --id app in the checkout: exit %d\n%s%s", open.code, open.stdout, open.stderr)
	}

	// Item 2: the gateways are served, and their URLs printed.
	card := run.logged(t, "a2a_card", "gateways of project demo")
	mcp := run.logged(t, "mcp", "gateways of project demo")
	if !strings.HasPrefix(card, "http://127.0.0.1:") || !strings.HasSuffix(mcp, "/mcp/demo") {
		t.Fatalf("gateway URLs printed: card %q, mcp %q", card, mcp)
	}
	if code, body := httpGet(t, card); code != 200 || !strings.Contains(body, `"name"`) {
		t.Errorf("GET %s: %d %s", card, code, body)
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"newcomer","version":"1"}}}`
	if a := httpDo(t, "POST", mcp, init, map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}); a.code != 200 || !strings.Contains(a.body, "serverInfo") {
		t.Errorf("MCP initialize at %s: %d %s", mcp, a.code, a.body)
	}

	// Item 5: five messages, five answered turns; the last three are the
	// script's repeated last line.
	chat := cliIn(t, checkout, run.nats, "hello\nchange the greeting\nwhat now?\nand now?\nstill there?\n", "conv", "chat", "demo")
	if chat.code != 0 || strings.Contains(chat.stdout, "model error") {
		t.Fatalf("conv chat demo: exit %d\n%s%s", chat.code, chat.stdout, chat.stderr)
	}
	if n := strings.Count(chat.stdout, "My script has ended"); n != 3 {
		t.Errorf("the demo answered %d of the last three messages with its last line, want 3:\n%s", n, chat.stdout)
	}
	if got, err := os.ReadFile(filepath.Join(run.dataHome, "jido-bus", "demo", "hello.go")); err != nil || !strings.Contains(string(got), "Hello, jido-bus!") {
		t.Errorf("the demo's copy was not edited: %v\n%s", err, got)
	}
}
