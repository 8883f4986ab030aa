package eventlog

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// killChildEnv switches the test binary into the appending child of
// TestKillDashNine; its value is the data directory.
const killChildEnv = "EVENTLOG_KILL_CHILD_DIR"

const killWriters = 4

// runKillChild appends from several goroutines until it is killed (or a
// minute passes, so an orphan cannot linger) and prints "ack <writer> <n>
// <seq>" for each acknowledged append.
func runKillChild(dir string) int {
	l, err := Open(dir, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	var out sync.Mutex
	deadline := time.Now().Add(time.Minute)
	var wg sync.WaitGroup
	for w := range killWriters {
		wg.Go(func() {
			stream := fmt.Sprintf("agent/w%d", w)
			for n := 1; time.Now().Before(deadline); n++ {
				res, err := l.Append(context.Background(), stream, ExactVersion(uint64(n-1)), sig("kill.test", strconv.Itoa(n)))
				if err != nil {
					fmt.Fprintln(os.Stderr, "child:", err)
					os.Exit(1)
				}
				out.Lock()
				fmt.Fprintf(os.Stdout, "ack %d %d %d\n", w, n, res.Positions[0].Seq)
				out.Unlock()
			}
		})
	}
	wg.Wait()
	return 0
}

func TestKillDashNine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), killChildEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := make(map[int]int) // writer → highest acknowledged n
	lines := bufio.NewScanner(stdout)
	total := 0
	for lines.Scan() {
		var w, n int
		var seq uint64
		if _, err := fmt.Sscanf(lines.Text(), "ack %d %d %d", &w, &n, &seq); err != nil {
			t.Fatalf("child said %q: %v", lines.Text(), err)
		}
		if seq != uint64(n) {
			t.Fatalf("writer %d: append %d got seq %d", w, n, seq)
		}
		acked[w] = max(acked[w], n)
		total++
		if total == 400 {
			// Mid-stream: the writers are between appends and inside them.
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	// Acks already printed before the kill count too.
	for lines.Scan() {
		var w, n int
		var seq uint64
		if _, err := fmt.Sscanf(lines.Text(), "ack %d %d %d", &w, &n, &seq); err == nil {
			acked[w] = max(acked[w], n)
		}
	}
	_ = cmd.Wait()
	if total < 400 {
		t.Fatalf("child stopped after %d acks: %s", total, stderr.String())
	}

	l, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer l.Close()
	for w := range killWriters {
		stream := fmt.Sprintf("agent/w%d", w)
		entries := collect(t, l.ReadStream(stream, ReadOptions{}))
		if len(entries) < acked[w] {
			t.Errorf("%s: %d entries after the kill, %d were acknowledged", stream, len(entries), acked[w])
		}
		for i, e := range entries {
			if e.Seq != uint64(i+1) || e.Event.ID() != strconv.Itoa(i+1) {
				t.Fatalf("%s: entry %d is seq %d id %s", stream, i, e.Seq, e.Event.ID())
			}
		}
	}
	report, err := l.Verify(context.Background(), nil)
	if err != nil || !report.OK() {
		t.Fatalf("verify after kill: %v %+v", err, report.Damaged)
	}
}
