package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/node"
)

// selectedContext writes a NATS CLI configuration whose selected context
// (as 'nats context select' leaves it) names url, and returns the
// environment that makes a command use it: the user's default node,
// reached without taking 127.0.0.1:4222 from whatever listens there.
func selectedContext(t *testing.T, url string) []string {
	t.Helper()
	cfg := t.TempDir()
	ctxDir := filepath.Join(cfg, "nats", "context")
	if err := os.MkdirAll(ctxDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "dflt.json"), []byte(`{"url":"`+url+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "nats", "context.txt"), []byte("dflt"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"XDG_CONFIG_HOME=" + cfg}
}

// TestDurabilityAuditDataDirBeatsTheDefaultNode: with a node answering
// at the default address, `--data-dir DIR` reads DIR — `log verify` of a
// directory that does not exist is not_found (it printed "ok" after
// checking the node's log), `log streams` lists DIR's streams — while a
// command naming neither reads the node and says so, and one naming both
// is refused.
func TestDurabilityAuditDataDirBeatsTheDefaultNode(t *testing.T) {
	theirs := StartNode(t, tools, t.TempDir())
	runCLI(t, []string{"NATS_URL=" + theirs.URL}, "agent", "start", "counter", "--id", "theirs").must(t, "agent start theirs")
	mineDir := t.TempDir()
	mine := StartNode(t, tools, mineDir)
	runCLI(t, []string{"NATS_URL=" + mine.URL}, "agent", "start", "counter", "--id", "mine").must(t, "agent start mine")
	if err := mine.Stop(t); err != nil {
		t.Fatal(err)
	}
	dflt := selectedContext(t, theirs.URL)

	missing := filepath.Join(t.TempDir(), "nonexistent")
	r := runCLI(t, dflt, "log", "verify", "--data-dir", missing)
	if r.code != 3 || !strings.Contains(r.stderr, "no event log in "+missing) || strings.Contains(r.stdout, "ok") {
		t.Errorf("log verify --data-dir %s with a default node up: exit %d\nstdout %s\nstderr %s\nwant exit 3, no event log", missing, r.code, r.stdout, r.stderr)
	}
	out := runCLI(t, dflt, "log", "streams", "--data-dir", mineDir, "-o", "json").must(t, "log streams --data-dir")
	if !strings.Contains(out, `"agent/mine"`) || strings.Contains(out, "agent/theirs") {
		t.Errorf("log streams --data-dir %s listed another log:\n%s", mineDir, out)
	}
	if r := runCLI(t, dflt, "conv", "ls", "--data-dir", mineDir, "-o", "json"); r.code != 0 || r.stderr != "" {
		t.Errorf("conv ls --data-dir: exit %d, stderr %q", r.code, r.stderr)
	}

	r = runCLI(t, dflt, "log", "streams", "-o", "json")
	if r.code != 0 || !strings.Contains(r.stdout, `"agent/theirs"`) {
		t.Fatalf("log streams naming neither: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if want := "reading the node at " + theirs.URL + " (context dflt)"; !strings.Contains(r.stderr, want) {
		t.Errorf("log streams naming neither does not say what it read: stderr %q, want %q", r.stderr, want)
	}

	r = runCLI(t, []string{"NATS_URL=" + theirs.URL}, "log", "streams", "--data-dir", mineDir)
	if r.code != 1 || !strings.Contains(r.stderr, "both say what to read") || !strings.Contains(r.stderr, "NATS_URL") || r.stdout != "" {
		t.Errorf("log streams with NATS_URL and --data-dir: exit %d\nstdout %s\nstderr %s\nwant a refusal", r.code, r.stdout, r.stderr)
	}
}

// TestDurabilityAuditConvStartBoundsMaxSteps: conv start through the
// NATS API with max_steps 100,000,000 is refused naming the bound, and no
// conversation is started.
func TestDurabilityAuditConvStartBoundsMaxSteps(t *testing.T) {
	node := StartNode(t, tools, t.TempDir())
	env := []string{"NATS_URL=" + node.URL}
	runCLI(t, env, "project", "open", t.TempDir(), "--id", "p1").must(t, "project open")
	r := reply(t, node.NATS(t, "req", "--raw", "jido.api.conv.start", `{"project":"p1","conversation":"c1","limits":{"max_steps":100000000}}`))
	e, _ := r["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if r["ok"] != false || errorType(r) != "invalid_request" || !strings.Contains(msg, "give 1 to 1000") {
		t.Fatalf("conv start with max_steps 100000000: %v, want invalid_request naming the bound", r)
	}
	if out := runCLI(t, env, "agent", "list", "-o", "json").must(t, "agent list"); strings.Contains(out, "p1/c1") {
		t.Fatalf("the refused conversation was started:\n%s", out)
	}
}

// mountTmpfs mounts a tmpfs of size bytes on a new temporary directory,
// unmounted when the test ends (after the nodes it started are gone).
// Mounting needs root: elsewhere the test is skipped, saying so.
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("filling a disk needs a small tmpfs, and mounting one needs root: run the test as root (the dev container is)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs to fill (%v: %s); run the test where root may mount", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// freeBytes is what an unprivileged writer may still write on dir's
// filesystem.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// fillUpTo writes the file path until at most leave bytes are free on its
// filesystem, so that the tools a test runs fill the rest quickly.
func fillUpTo(t *testing.T, path string, leave int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for free := freeBytes(t, filepath.Dir(path)); free > leave; free = freeBytes(t, filepath.Dir(path)) {
		if _, err := f.Write(buf[:min(int64(len(buf)), free-leave)]); err != nil {
			t.Fatalf("fill %s: %v", path, err)
		}
	}
}

// toolLoad is what callers of a project's tools were answered.
type toolLoad struct {
	mu     sync.Mutex
	acked  map[string]bool // call ids answered ok
	tools  map[string]int  // tool name → how many calls of it were answered ok
	failed map[string]int  // error type → how many calls were answered it
	lost   int             // calls without an answer (the node went away)
}

// callToolsUntilDown runs workers that call write_file (sizes up to
// maxSize), run_command (a shell writing as much, the tool with which a
// full disk was answered ok while its outcome was lost) and read_file on
// project through the NATS API of n, each call with its own id under
// prefix, each writing the file <id>.txt, until the node stops answering
// (its log failed: the disk is full) or every worker made max calls.
func callToolsUntilDown(t *testing.T, n *Node, project, prefix string, workers, maxSize, max int, load *toolLoad) {
	t.Helper()
	var wg sync.WaitGroup
	var down atomic.Bool
	for g := range workers {
		nc, err := nats.Connect(n.URL, nats.NoReconnect())
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(g), uint64(len(prefix))))
		wg.Go(func() {
			defer nc.Close()
			for i := 0; i < max && !down.Load(); i++ {
				id := fmt.Sprintf("%s-w%d-%d", prefix, g, i)
				size := 1 + rng.IntN(maxSize)
				call := map[string]any{"project": project, "id": id, "name": "write_file",
					"args": map[string]any{"path": id + ".txt", "content": strings.Repeat("x", size)}}
				switch i % 4 {
				case 1:
					call["name"], call["args"] = "run_command", map[string]any{"argv": []string{"sh", "-c", fmt.Sprintf("head -c %d /dev/zero > %s.txt", size, id)}}
				case 3:
					call["name"], call["args"] = "read_file", map[string]any{"path": fmt.Sprintf("%s-w%d-%d.txt", prefix, g, i-1)}
				}
				body, _ := json.Marshal(call)
				msg, err := nc.Request("jido.api.project.tool.call", body, 30*time.Second)
				if err != nil {
					load.mu.Lock()
					load.lost++
					load.mu.Unlock()
					down.Store(true) // the node is gone: no answer is no acknowledgement
					return
				}
				var st bus.ReplyStatus
				if err := json.Unmarshal(msg.Data, &st); err != nil {
					t.Errorf("call %s: reply %q: %v", id, msg.Data, err)
					return
				}
				load.mu.Lock()
				if st.OK {
					load.acked[id] = true
					load.tools[call["name"].(string)]++
				} else {
					load.failed[bus.ErrorType(st.Err())]++
					// A full disk is unavailable (or a tool's own failure
					// to write, tool_failed), never a bug's word.
					if typ := bus.ErrorType(st.Err()); typ == bus.ReasonInternal {
						t.Errorf("call %s answered %v", id, st.Err())
					}
				}
				load.mu.Unlock()
				if bus.ErrorType(st.Err()) == bus.ReasonUnavailable {
					down.Store(true)
				}
			}
		})
	}
	wg.Wait()
}

// checkOutcomes fails the test for every acknowledged call whose start
// and completion are not both in project's stream of the (stopped) node's
// data dir, for every call completed without a start, and for every call
// of ran (ids of calls whose file is in the project) without a start: a
// tool whose start was not committed must not have run.
func checkOutcomes(t *testing.T, dataDir, project string, acked map[string]bool, ran []string) {
	t.Helper()
	l, err := eventlog.Open(node.LogDir(dataDir), eventlog.Options{})
	if err != nil {
		t.Fatalf("open the log after the disk filled: %v", err)
	}
	defer l.Close()
	seen := map[string]map[string]bool{}
	for e, err := range l.ReadStream("project/"+project, eventlog.ReadOptions{Types: "project.tool.**"}) {
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			CallID string `json:"call_id"`
		}
		if err := json.Unmarshal(e.Event.Data(), &d); err != nil {
			t.Fatal(err)
		}
		if seen[d.CallID] == nil {
			seen[d.CallID] = map[string]bool{}
		}
		seen[d.CallID][e.Event.Type()] = true
	}
	missing := 0
	for id := range acked {
		if s := seen[id]; !s["project.tool.started"] || !s["project.tool.completed"] {
			if missing++; missing <= 10 {
				t.Errorf("call %s was answered ok, but the log holds %v of it", id, s)
			}
		}
	}
	for id, s := range seen {
		if s["project.tool.completed"] && !s["project.tool.started"] {
			t.Errorf("call %s completed without a start in the log", id)
		}
	}
	for _, id := range ran {
		if !seen[id]["project.tool.started"] {
			t.Errorf("call %s wrote its file, but its start is not in the log (the log holds %v of it)", id, seen[id])
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged calls are not in the log", missing, len(acked))
	}
}

// diskFullRound fills the tmpfs holding dataDir and root (all but leave
// bytes with a file, the rest from the tools of project p1 under load),
// and checks that the node stopped with exit 3
// (its log failed) and that every call answered ok is in the log. It
// frees the space again before returning.
func diskFullRound(t *testing.T, n *Node, mnt, dataDir, root, prefix string, leave int64, workers, maxSize int, load *toolLoad) {
	t.Helper()
	filler := filepath.Join(mnt, "filler")
	fillUpTo(t, filler, leave)
	before := len(load.acked)
	callToolsUntilDown(t, n, "p1", prefix, workers, maxSize, 100000, load)
	if code := n.Exited(t, time.Minute); code != 3 {
		t.Fatalf("round %s: the node exited %d once the disk was full, want 3 (its log failed)\n%s", prefix, code, n.Logs())
	}
	if len(load.acked) == before {
		t.Fatalf("round %s: no call was answered ok before the disk filled", prefix)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	written, _ := filepath.Glob(filepath.Join(root, prefix+"-*.txt"))
	ran := make([]string, 0, len(written))
	for _, f := range written {
		ran = append(ran, strings.TrimSuffix(filepath.Base(f), ".txt"))
		_ = os.Remove(f)
	}
	checkOutcomes(t, dataDir, "p1", load.acked, ran)
}

// diskFull runs rounds of diskFullRound on a tmpfs of size bytes: the
// node is started again on the same data dir after each, its project
// coming back with it, and every call acknowledged in any round must
// still be in the log at the end.
func diskFull(t *testing.T, size, leave int64, rounds, workers, maxSize int) *toolLoad {
	t.Helper()
	mnt := mountTmpfs(t, size)
	dataDir, root := filepath.Join(mnt, "data"), filepath.Join(mnt, "proj")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	// The policy lets run_command run the shell that writes; it lies off
	// the tmpfs, which the test fills.
	policy := writeFile(t, "policy.yaml", "commands:\n  programs: [sh, head]\n")
	load := &toolLoad{acked: map[string]bool{}, tools: map[string]int{}, failed: map[string]int{}}
	for r := range rounds {
		n := StartNode(t, tools, dataDir)
		if r == 0 {
			runCLI(t, []string{"NATS_URL=" + n.URL}, "project", "open", root, "--id", "p1", "--policy", policy).must(t, "project open")
		}
		diskFullRound(t, n, mnt, dataDir, root, fmt.Sprintf("r%d", r), leave, workers, maxSize, load)
	}
	for _, tool := range []string{"write_file", "run_command", "read_file"} {
		if load.tools[tool] == 0 {
			t.Errorf("no %s call was answered ok: the rounds prove nothing of it (answered ok: %v)", tool, load.tools)
		}
	}
	return load
}

// TestDurabilityAuditDiskFullLosesNoAcknowledgedCall: tools fill the
// disk of the node's data dir under load; the node stops (exit 3) when
// its log cannot write, and every tool call that was answered ok has its
// start and its outcome in the log — none answered ok with the outcome
// lost, as run_command was. Three rounds, each after a restart; `make
// soak` runs many more (TestCrashSuiteDiskFull).
func TestDurabilityAuditDiskFullLosesNoAcknowledgedCall(t *testing.T) {
	load := diskFull(t, 24<<20, 2<<20, 3, 4, 64<<10)
	t.Logf("%d calls answered ok (%v), failures by type %v, %d without an answer", len(load.acked), load.tools, load.failed, load.lost)
}
