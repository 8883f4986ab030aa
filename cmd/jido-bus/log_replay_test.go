package main

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/node"
)

// counterLog leaves a data dir with a counter incremented by 1, 2 and 3.
func counterLog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	l, err := eventlog.Open(logDir(dir), eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	types, err := node.AgentTypes(nil)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: l, Types: types})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	ctx := context.Background()
	if _, err := rt.Start(ctx, runtime.StartRequest{Type: "counter", ID: "c1"}); err != nil {
		t.Fatal(err)
	}
	for by := 1; by <= 3; by++ {
		sig, _ := bus.NewSignal("counter.increment", "test", map[string]int{"by": by})
		if _, err := rt.Call(ctx, "c1", sig); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLogReplay(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := counterLog(t)
	local := []string{"--data-dir", dir}
	out, _, err := runLog(t, "", append([]string{"replay", "agent/c1", "--verify"}, local...)...)
	if err != nil || !strings.Contains(out, "version 3") || !strings.Contains(out, "verified") || !strings.Contains(out, `"count":6`) {
		t.Fatalf("replay --verify: %v\n%s", err, out)
	}
	// agent/c1: 1 started, then each increment (2, 4, 6) and its cmd
	// record (3, 5, 7). A position is a stream sequence: after seq 4 the
	// second increment is decided, as its cmd record at 5 says.
	for _, to := range []string{"4", "5"} {
		out, _, err = runLog(t, "", append([]string{"replay", "agent/c1", "--to", to}, local...)...)
		if err != nil || !strings.Contains(out, `"count":3`) || !strings.Contains(out, "after seq "+to+", at version 2") {
			t.Fatalf("replay --to %s: %v\n%s", to, err, out)
		}
	}
	for _, diff := range [][]string{{"--diff", "2,6"}, {"--diff", "2", "7"}, {"--diff", "6", "--diff", "3"}} {
		out, _, err = runLog(t, "", append(append([]string{"replay", "agent/c1"}, diff...), local...)...)
		if err != nil || !strings.Contains(out, "~ /count: 1 -> 6") || !strings.Contains(out, "(version 1) to after seq") {
			t.Fatalf("replay %v: %v\n%s", diff, err, out)
		}
	}
	out, _, err = runLog(t, "", append([]string{"replay", "agent/c1", "--diff", "1,2", "-o", "json"}, local...)...)
	if err != nil || !strings.Contains(out, `"from":1,"to":2,"from_version":0,"to_version":1`) {
		t.Fatalf("replay --diff 1,2 -o json: %v\n%s", err, out)
	}
	if _, _, err := runLog(t, "", append([]string{"replay", "agent/c1", "agent/c2"}, local...)...); err == nil || !strings.Contains(err.Error(), "unexpected argument") {
		t.Fatalf("replay with two streams: %v", err)
	}
	if _, _, err := runLog(t, "", append([]string{"replay", "dlq"}, local...)...); err == nil {
		t.Fatal("replaying a stream that is not an agent's succeeded")
	}
}
