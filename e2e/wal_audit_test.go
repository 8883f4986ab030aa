package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// The WAL audit of the issue "Operators": an acknowledged signal is never
// lost, and never silently, when the newest write-ahead log is damaged
// after a crash; tried through the binary.

// walAuditCalls is how many acknowledged counter calls the tests make: a
// newest WAL within one 32 KiB block (a call writes about 1.9 KB), as a
// short session leaves it.
const walAuditCalls = 15

// crashedCounter starts a node on a new data directory, starts counter c1,
// makes walAuditCalls acknowledged increments and kills the node with
// SIGKILL. It returns the data directory.
func crashedCounter(t *testing.T) string {
	t.Helper()
	dataDir := filepath.Join(t.TempDir(), "data")
	node := StartNode(t, tools, dataDir)
	nc, err := nats.Connect(node.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if r := walCall(t, nc, "jido.api.agent.start", `{"type":"counter","id":"c1"}`); r["ok"] != true {
		t.Fatalf("start = %v", r)
	}
	for i := 1; i <= walAuditCalls; i++ {
		r := walCall(t, nc, "jido.agent.c1.counter.increment", `{"by":1}`)
		if r["ok"] != true || r["version"] != float64(i) {
			t.Fatalf("increment %d = %v", i, r)
		}
	}
	node.Kill(t)
	return dataDir
}

func walCall(t *testing.T, nc *nats.Conn, subject, body string) map[string]any {
	t.Helper()
	msg, err := nc.Request(subject, []byte(body), 10*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	var m map[string]any
	if err := json.Unmarshal(msg.Data, &m); err != nil {
		t.Fatalf("%s: reply %q: %v", subject, msg.Data, err)
	}
	return m
}

// newestWAL returns the path of the highest-numbered WAL file under dir.
func newestWAL(t *testing.T, dir string) string {
	t.Helper()
	var wals []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".log") {
			wals = append(wals, p)
		}
		return err
	})
	if err != nil || len(wals) == 0 {
		t.Fatalf("no WAL under %s: %v", dir, err)
	}
	slices.SortFunc(wals, func(a, b string) int { return strings.Compare(filepath.Base(a), filepath.Base(b)) })
	return wals[len(wals)-1]
}

// counterVersion starts a node on dataDir (with extra flags), makes one
// more call and returns the version it got, minus one: the calls the
// node found committed.
func counterVersion(t *testing.T, dataDir string, extra ...string) (int, *Node) {
	t.Helper()
	node := StartNode(t, tools, dataDir, extra...)
	nc, err := nats.Connect(node.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	r := walCall(t, nc, "jido.agent.c1.counter.increment", `{"by":1}`)
	v, _ := r["version"].(float64)
	if r["ok"] != true || v < 1 {
		t.Fatalf("increment after the restart = %v", r)
	}
	return int(v) - 1, node
}

// TestWALAuditDamageInTheMiddleRefused: sixteen bytes flipped in the middle
// of the newest WAL (one block, after kill -9) keep the node from starting
// with the file and offset named (exit 1), `log verify` exits 2 naming
// them, and `serve --accept-wal-loss` starts with the entries before the
// damage, the damaged file copied aside; `log verify` is then clean.
func TestWALAuditDamageInTheMiddleRefused(t *testing.T) {
	dataDir := crashedCounter(t)
	wal := newestWAL(t, filepath.Join(dataDir, "log"))
	data, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) >= 32<<10 {
		t.Fatalf("the newest WAL %s is %d bytes: the test wants a small one", wal, len(data))
	}
	mid := len(data) / 2
	for i := mid; i < mid+16; i++ {
		data[i] ^= 0x5a
	}
	if err := os.WriteFile(wal, data, 0o644); err != nil {
		t.Fatal(err)
	}

	r := runCLI(t, nil, "serve", "--data-dir", dataDir, "--listen", "127.0.0.1:0")
	if r.code != 1 || !strings.Contains(r.stderr, wal) || !strings.Contains(r.stderr, "damaged at offset") || !strings.Contains(r.stderr, "--accept-wal-loss") {
		t.Fatalf("serve on a damaged WAL: exit %d, stderr\n%s\nwant exit 1 naming %s, the offset and --accept-wal-loss", r.code, r.stderr, wal)
	}
	v := runCLI(t, nil, "log", "verify", "--data-dir", dataDir)
	if v.code != 2 || !strings.Contains(v.stdout+v.stderr, wal) {
		t.Fatalf("log verify on a damaged WAL: exit %d\n%s%s\nwant exit 2 naming %s", v.code, v.stdout, v.stderr, wal)
	}

	found, node := counterVersion(t, dataDir, "--accept-wal-loss")
	if found >= walAuditCalls || found < 1 {
		t.Fatalf("after accepting the loss the counter had %d calls; want fewer than %d, more than 0", found, walAuditCalls)
	}
	if !strings.Contains(node.Logs(), "damaged-wal") {
		t.Fatalf("the node did not say where the dropped part went:\n%s", node.Logs())
	}
	if err := node.Stop(t); err != nil {
		t.Fatalf("stop: %v", err)
	}
	saved, err := filepath.Glob(filepath.Join(dataDir, "*-damaged-wal", "*", filepath.Base(wal)))
	if err != nil || len(saved) != 1 {
		t.Fatalf("the damaged WAL was not copied aside: %v %v", saved, err)
	}
	if got, err := os.ReadFile(saved[0]); err != nil || len(got) != len(data) {
		t.Fatalf("the copy aside is not the whole damaged file: %d bytes of %d (%v)", len(got), len(data), err)
	}
	runCLI(t, nil, "log", "verify", "--data-dir", dataDir).must(t, "log verify after accepting the loss")
}

// TestWALAuditTornTailStarts: a write torn by the crash (the first bytes
// of a record after the last acknowledged one, which was never synced)
// is not damage: the node starts without a word and every acknowledged
// call is there.
func TestWALAuditTornTailStarts(t *testing.T) {
	dataDir := crashedCounter(t)
	wal := newestWAL(t, filepath.Join(dataDir, "log"))
	data, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	// The torn write: the beginning of a copy of the last record's bytes.
	torn := append(data, data[len(data)-300:len(data)-100]...)
	if err := os.WriteFile(wal, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	runCLI(t, nil, "log", "verify", "--data-dir", dataDir).must(t, "log verify on a torn tail")
	found, node := counterVersion(t, dataDir)
	if found != walAuditCalls {
		t.Fatalf("after a torn tail the counter had %d calls, want all %d", found, walAuditCalls)
	}
	if strings.Contains(node.Logs(), "damaged") {
		t.Fatalf("a torn tail was reported as damage:\n%s", node.Logs())
	}
}
