package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// The run_command sandbox as an attacker meets it through the real binary
// (issue 20, items 1–5): a command reads nothing outside its project and
// the system's programs, leaves nothing running behind it, has no network
// when the policy says so, and ends as a failed call at each of its
// resource limits while the node goes on serving.

// sandboxRig is a node and a project whose policy lists the programs the
// attacks use. The policy file lies outside the project (a policy in
// .jido would be the project's own choice).
type sandboxRig struct {
	node *Node
	base string // the folder holding the project, its neighbours and the node's data dir
	proj string
	on   []string
}

func (r *sandboxRig) run(t *testing.T, args ...string) string {
	t.Helper()
	return tools.Run(t, append(args, r.on...)...)
}

// call runs a tool and returns its data (nil when the call failed), the
// error type and message of a failed call, and stderr.
func (r *sandboxRig) call(t *testing.T, project, tool string, args any) (data map[string]any, errType, stderr string) {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	// The CLI waits as long as the slowest call here may take on a loaded
	// machine (a CPU limit is CPU time, not wall time).
	stdout, stderr, err := tryRun(append([]string{"project", "call", project, tool, string(b), "-o", "json", "--timeout", "120s"}, r.on...)...)
	if err == nil {
		var reply struct{ Data map[string]any }
		if err := json.Unmarshal([]byte(stdout), &reply); err != nil {
			t.Fatalf("project call %s %s: %v\n%s", tool, b, err, stdout)
		}
		return reply.Data, "", stderr
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("project call %s %s: %v", tool, b, err)
	}
	// stderr is "jido-bus: <type>: <message>" or the like; the type is
	// the first word that is one.
	for _, typ := range []string{"limit_exceeded", "timeout", "denied", "outside_root", "not_found", "internal", "too_large", "unavailable", "invalid_request"} {
		if strings.Contains(stderr, typ) {
			return nil, typ, stderr
		}
	}
	return nil, "?", stderr
}

// sh runs `sh -c script` in the project and returns its stdout and stderr
// (the call must complete; the script's own failures are output).
func (r *sandboxRig) sh(t *testing.T, script string) (stdout, stderr string) {
	t.Helper()
	data, typ, msg := r.call(t, "p", "run_command", map[string]any{"argv": []string{"sh", "-c", script}})
	if data == nil {
		t.Fatalf("run_command %q failed: %s %s", script, typ, msg)
	}
	return fmt.Sprint(data["stdout"]), fmt.Sprint(data["stderr"])
}

// newSandboxRig starts a node and opens the project p under policy (YAML
// appended to a commands section listing the programs). serveConfig, when
// set, is written into the project's folder (where an operator running
// serve from there would keep it) and given to serve with --config.
func newSandboxRig(t *testing.T, policy, serveConfig string) *sandboxRig {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &sandboxRig{base: base, proj: filepath.Join(base, "proj")}
	writeProjectTree(t, r.proj, map[string]string{"main.go": "package main\n"})
	var extra []string
	if serveConfig != "" {
		cfg := filepath.Join(r.proj, "jido.yaml")
		writeProjectTree(t, r.proj, map[string]string{"jido.yaml": strings.ReplaceAll(serveConfig, "BASE", base)})
		extra = []string{"--config", cfg}
	}
	r.node = StartNode(t, tools, filepath.Join(base, "data"), extra...)
	r.on = []string{"--nats-url", r.node.URL}
	pol := filepath.Join(base, "policy.yaml")
	writeProjectTree(t, base, map[string]string{"policy.yaml": "commands:\n  programs: [sh, bash, cat, ls, head, sleep, setsid, dd, " + probe(t) + "]\n" + policy})
	r.run(t, "project", "open", r.proj, "--id", "p", "--policy", pol)
	return r
}

// Item 1: a command reads its project and the system's programs, nothing
// else: not a neighbour's file, not /root, not the node's data dir, its
// config or another project, even inside a folder the operator let
// commands read.
func TestSandboxReadsOnlyTheProject(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.txt")
	writeProjectTree(t, filepath.Dir(secret), map[string]string{"secret.txt": "NEIGHBOUR-SECRET\n"})
	// The operator lets commands read BASE, which holds the node's data
	// dir and another project too: those stay hidden.
	r := newSandboxRig(t, "", "sandbox:\n  read: [BASE/shared]\n  projects:\n    - root: BASE/proj\n      read: [BASE]\n")
	writeProjectTree(t, r.base, map[string]string{"shared/lib.txt": "SHARED\n", "other/o.txt": "OTHER-PROJECT-SECRET\n"})
	r.run(t, "project", "open", filepath.Join(r.base, "other"), "--id", "other")

	out, _ := r.sh(t, "cat main.go "+r.base+"/shared/lib.txt; head -c 100 /etc/hosts >/dev/null && echo system-ok")
	for _, want := range []string{"package main", "SHARED", "system-ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("a command cannot read what it should (%s): %q", want, out)
		}
	}
	pid := r.node.cmd.Process.Pid
	for _, c := range []struct{ what, script, leak string }{
		{"a neighbour's file", "cat " + secret, "NEIGHBOUR-SECRET"},
		{"/root", "ls -a /root; cat /root/.bashrc", ".bashrc"},
		{"the node's data dir", "ls -R " + r.node.DataDir + "; cat " + r.node.DataDir + "/log/MANIFEST*", "MANIFEST"},
		{"the node's config", "cat jido.yaml " + r.proj + "/jido.yaml", "sandbox:"},
		{"another project", "ls " + r.base + "/other; cat " + r.base + "/other/o.txt", "o.txt"},
		{"the node's process", fmt.Sprintf("cat /proc/%d/cmdline", pid), "serve"},
	} {
		out, errOut := r.sh(t, c.script)
		if strings.Contains(out, c.leak) {
			t.Errorf("%s is readable: %q shows %q\nstdout %.300q\nstderr %.300q", c.what, c.script, c.leak, out, errOut)
		}
	}

	get := r.run(t, "project", "get", "p", "-o", "json")
	var info struct {
		Sandbox struct {
			RunCommand string   `json:"run_command"`
			Reads      []string `json:"reads"`
			Limits     map[string]any
		}
	}
	if err := json.Unmarshal([]byte(get), &info); err != nil {
		t.Fatal(err)
	}
	if info.Sandbox.RunCommand != "confined" || !contains(info.Sandbox.Reads, r.base) || !contains(info.Sandbox.Reads, "/usr") {
		t.Errorf("project get does not say what commands may read:\n%s", get)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Item 2: nothing a command starts survives the call, its timeout or the
// node's kill -9, not even a child that left the session with setsid.
func TestSandboxChildrenDieWithTheCall(t *testing.T) {
	r := newSandboxRig(t, "", "")
	tag := func(s string) string { return fmt.Sprintf("%d.%d%03d", 30, os.Getpid()%1000, len(s)) }
	// gone waits (with a bound) for every process with arg to be gone.
	gone := func(t *testing.T, what, arg string) {
		t.Helper()
		defer killAll("sleep\x00" + arg + "\x00") // ours alone: no other process has arg
		testkit.Eventually(t, what+": `sleep "+arg+"` to end with the call", func() bool {
			return len(processesWith("sleep\x00"+arg+"\x00")) == 0
		})
	}
	late := filepath.Join(r.proj, "late.txt")

	// child starts a child that leaves the session, writes its pid (so
	// the test knows it ran), sleeps and then writes late.txt.
	child := func(arg string) string {
		return "rm -f child.pid; setsid sh -c 'echo $$ > child.pid; sleep " + arg + "; echo late > late.txt' </dev/null >/dev/null 2>&1 & " +
			"while [ ! -s child.pid ]; do :; done; "
	}
	started := func(t *testing.T, what string) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(r.proj, "child.pid")); err != nil {
			t.Fatalf("%s: the setsid child never started: %v", what, err)
		}
	}

	// The call returns while its setsid child sleeps.
	a := tag("returns")
	r.sh(t, child(a)+"echo started")
	started(t, "return")
	gone(t, "after the call returned", a)

	// The call times out.
	b := tag("timeout!")
	_, typ, msg := r.call(t, "p", "run_command", map[string]any{"argv": []string{"sh", "-c", child(b) + "sleep " + b}, "timeout": "5s"})
	if typ != "timeout" {
		t.Errorf("the call past its timeout: %s %s", typ, msg)
	}
	started(t, "timeout")
	gone(t, "after the call's timeout", b)

	// The node is killed with the call running.
	c := tag("node kill -9")
	done := make(chan struct{})
	go func() {
		defer close(done)
		args, _ := json.Marshal(map[string]any{"argv": []string{"sh", "-c", child(c) + "sleep " + c}, "timeout": "60s"})
		tryRun(append([]string{"project", "call", "p", "run_command", string(args)}, r.on...)...)
	}()
	testkit.Eventually(t, "the command's setsid child", func() bool { return len(processesWith("sleep\x00"+c+"\x00")) == 2 })
	r.node.Kill(t)
	gone(t, "after the node's kill -9", c)
	<-done
	if _, err := os.Stat(late); err == nil {
		t.Errorf("a child of a command wrote %s after its call ended", late)
	}
}

// Item 3: network: false is a network namespace with nothing in it: no
// UDP datagram leaves, no unix socket outside is reached.
func TestSandboxNoNetwork(t *testing.T) {
	r := newSandboxRig(t, "", "")
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	sock := filepath.Join(t.TempDir(), "s.sock")
	ux, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ux.Close()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	accepted := make(chan string, 2)
	for _, ln := range []net.Listener{ux, tcp} {
		go func() {
			if c, err := ln.Accept(); err == nil {
				accepted <- ln.Addr().String()
				c.Close()
			}
		}()
	}

	for _, argv := range [][]string{
		{probe(t), "udp", udp.LocalAddr().String()},
		{probe(t), "unix", sock},
		{probe(t), "tcp", tcp.Addr().String()},
	} {
		data, typ, msg := r.call(t, "p", "run_command", map[string]any{"argv": argv})
		if data == nil {
			t.Fatalf("%v: %s %s", argv, typ, msg)
		}
		if data["exit_code"] != 1.0 || !strings.Contains(fmt.Sprint(data["stderr"]), "probe:") {
			t.Errorf("%v reached the network: %v", argv, data)
		}
	}
	// What arrived first is the test's own datagram, sent after the
	// command's: the command's never came.
	self, err := net.Dial("udp", udp.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	if _, err := self.Write([]byte("from-test")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	udp.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, _, err := udp.ReadFrom(buf)
	if err != nil || string(buf[:n]) != "from-test" {
		t.Errorf("the UDP listener got %q (%v) first, want the test's own datagram", buf[:n], err)
	}
	// The probes' exit codes said whether they connected; a listener that
	// accepted is a second witness.
	select {
	case addr := <-accepted:
		t.Errorf("%s accepted a connection from the command", addr)
	default:
	}
}

// Item 4: each resource limit ends the call as a failed call naming the
// limit, and the node goes on serving.
func TestSandboxLimitsEndTheCall(t *testing.T) {
	r := newSandboxRig(t, "  limits: {processes: 64, file_size: 1MiB, disk: 4MiB, temp_size: 512KiB, cpu_seconds: 2, output: 64KiB}\n", "")
	var st syscall.Statfs_t
	onTmpfs := syscall.Statfs(r.proj, &st) == nil && st.Type == 0x01021994 // TMPFS_MAGIC
	for _, c := range []struct {
		name  string
		argv  []string
		limit string
	}{
		// The bomb runs beside a program that waits: a bomb whose program
		// has ended is ended with it (item 2).
		{"fork bomb", []string{"bash", "-c", "sleep 60 & s=$!; :(){ :|:& }; :; wait $s"}, "processes"},
		{"a big file", []string{"dd", "if=/dev/zero", "of=big", "bs=64k", "count=1000"}, "file_size"},
		{"many files in the root", []string{"sh", "-c", "i=0; while head -c 500000 /dev/zero > f$i; do i=$((i+1)); done"}, "disk"},
		{"a big file in TMPDIR", []string{"sh", "-c", `head -c 100000000 /dev/zero > "$TMPDIR/big"`}, "temp_size"},
		{"a busy loop", []string{"sh", "-c", "while :; do :; done"}, "cpu_seconds"},
		{"a loud command", []string{"sh", "-c", "while :; do echo yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy; done"}, "output"},
	} {
		if c.limit == "disk" && onTmpfs {
			t.Logf("%s: skipped, the project is on tmpfs, whose writes are memory (the disk limit counts writes to storage)", c.name)
			continue
		}
		data, typ, msg := r.call(t, "p", "run_command", map[string]any{"argv": c.argv, "timeout": "60s"})
		if data != nil || typ != "limit_exceeded" || !strings.Contains(msg, "commands.limits."+c.limit) {
			t.Errorf("%s: got %v, %s %s; want limit_exceeded naming %s", c.name, data, typ, msg, c.limit)
		}
		// The node serves the next call.
		if out, _ := r.sh(t, "echo still-serving"); out != "still-serving\n" {
			t.Fatalf("after %s: %q", c.name, out)
		}
	}
	if fi, err := os.Stat(filepath.Join(r.proj, "big")); err != nil || fi.Size() > 1<<20 {
		t.Errorf("the big file in the root: %v %v, want at most 1 MiB", fi, err)
	}
	get := r.run(t, "project", "get", "p", "-o", "json")
	for _, want := range []string{`"processes":64`, `"file_size":1048576`, `"disk":4194304`, `"temp_size":524288`, `"cpu_seconds":2`, `"output":65536`,
		`"processes_bound_by":"pid_max of the command's PID namespace"`} {
		if !strings.Contains(strings.ReplaceAll(get, " ", ""), strings.ReplaceAll(want, " ", "")) {
			t.Errorf("project get does not show %s:\n%s", want, get)
		}
	}
}

// Item 5: a file with another hard link is refused for write and edit,
// and for read unless the policy allows it: the link may have been made to
// a file outside the root before the project was opened.
func TestSandboxHardLinksRefused(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "passwd")
	writeProjectTree(t, filepath.Dir(outside), map[string]string{"passwd": "root:x:0:0\n"})
	r := newSandboxRig(t, "", "")
	if err := os.Link(outside, filepath.Join(r.proj, "linked")); err != nil {
		t.Skipf("no hard link across these folders: %v", err)
	}
	for tool, args := range map[string]map[string]any{
		"read_file":  {"path": "linked"},
		"write_file": {"path": "linked", "content": "pwned\n"},
		"edit_file":  {"path": "linked", "old_string": "root", "new_string": "pwned"},
	} {
		data, typ, msg := r.call(t, "p", tool, args)
		if data != nil || typ != "denied" || !strings.Contains(msg, "hard link") {
			t.Errorf("%s of a hard-linked file: %v, %s %s; want denied saying it has other hard links", tool, data, typ, msg)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "root:x:0:0\n" {
		t.Errorf("the file outside is now %q", b)
	}
}

var (
	probeOnce sync.Once
	probePath string
	probeErr  error
)

// probe builds (once) a small program that tries one network operation:
// "udp ADDR" sends a datagram, "unix PATH" and "tcp ADDR" connect. It
// exits 0 when the operation succeeded, 1 (saying "probe: …") when not.
func probe(t *testing.T) string {
	t.Helper()
	probeOnce.Do(func() {
		// Beside the jido-bus binary, in the folder TestMain removes.
		dir := filepath.Dir(tools.JidoBus)
		src := filepath.Join(dir, "probe.go")
		if probeErr = os.WriteFile(src, []byte(probeSource), 0o644); probeErr != nil {
			return
		}
		probePath = filepath.Join(dir, "netprobe")
		cmd := exec.Command("go", "build", "-o", probePath, src)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			probeErr = fmt.Errorf("build the probe: %v\n%s", err, out)
		}
	})
	if probeErr != nil {
		t.Fatal(probeErr)
	}
	return probePath
}

const probeSource = `package main

import (
	"fmt"
	"net"
	"os"
)

func main() {
	c, err := net.Dial(os.Args[1], os.Args[2])
	if err == nil {
		_, err = c.Write([]byte("from-sandbox"))
		c.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(1)
	}
	fmt.Println("sent")
}
`
