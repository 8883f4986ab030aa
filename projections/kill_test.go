package projections

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killChildEnv switches the test binary into the folding child of
// TestKillMidFold; its value is the data directory.
const killChildEnv = "PROJECTIONS_KILL_CHILD_DIR"

// runKillChild folds the tally projection with a tiny cache and frequent
// checkpoints and prints "at <position> <checkpoint>" as it goes, until it
// is killed (or a minute passes, so an orphan cannot linger).
func runKillChild(dir string) int {
	l, err := openLogErr(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	s, err := OpenStore(dir+"/projections", StoreOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	r, err := NewRunner(l, s, Options{CacheStates: 8, CheckpointEvery: 37}, MustDefine[*tallyState](tally{}), MustDefine[*tallyState](total{}))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			st := r.Status()[0]
			fmt.Printf("at %d %d\n", st.Position, st.Checkpoint)
			time.Sleep(time.Millisecond)
		}
	}()
	if err := r.CatchUp(ctx, nil); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	fmt.Println("done")
	return 0
}

// TestKillMidFold kills a folding process (SIGKILL) after its first
// checkpoints and before it has finished, then resumes in this process:
// every state must equal a fold of the log, with no entry applied twice
// (tallyState.Bad) or skipped (Count, Sum).
func TestKillMidFold(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	l := openLog(t, dir)
	for round := range 300 {
		appendRound(t, l, round, 40)
	}
	head := l.Durable()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

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
	lines := bufio.NewScanner(stdout)
	killed := false
	for lines.Scan() {
		var pos, cp uint64
		if _, err := fmt.Sscanf(lines.Text(), "at %d %d", &pos, &cp); err != nil {
			break // "done", or the child failed
		}
		if cp > 0 && pos < head {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
			break
		}
	}
	_, _ = io.Copy(io.Discard, stdout) // let the child's last writes go
	_ = cmd.Wait()
	if !killed {
		t.Fatalf("the child finished before it could be killed mid-fold: %s", stderr.String())
	}

	l = openLog(t, dir)
	defer l.Close()
	s := openStore(t, dir)
	defer s.Close()
	cp, ok, err := s.Checkpoint("tally")
	if err != nil || !ok {
		t.Fatalf("checkpoint after the kill: %v %v", ok, err)
	}
	if cp.Position == 0 || cp.Position >= head {
		t.Fatalf("checkpoint after the kill at %d of %d: the kill was not mid-fold", cp.Position, head)
	}
	r, err := NewRunner(l, s, Options{CacheStates: 8}, MustDefine[*tallyState](tally{}), MustDefine[*tallyState](total{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	expectTallies(t, r, l)
	st, err := r.Get("total", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := decodeTally(t, st.State); got.Count != head || got.Bad != 0 || got.Last != head {
		t.Fatalf("total after resume: %+v, want %d entries", got, head)
	}
}
