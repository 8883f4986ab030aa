package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestReplayPastTheHead: --to and --diff past the stream's last entry
// are the same mistake and get the same answer, an error naming it, as
// conv show --at does.
func TestReplayPastTheHead(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := counterLog(t)
	local := []string{"--data-dir", dir}
	// agent/c1 ends at seq 7, the last increment's cmd record, or 8 when
	// the runtime recorded its directives' outcomes after it.
	out, _, err := runLog(t, "", append([]string{"show", "agent/c1", "-o", "json"}, local...)...)
	var page struct{ Entries []struct{ Seq uint64 } }
	if err != nil || json.Unmarshal([]byte(out), &page) != nil || len(page.Entries) < 7 {
		t.Fatalf("log show agent/c1: %v\n%s", err, out)
	}
	head := strconv.FormatUint(page.Entries[len(page.Entries)-1].Seq, 10)
	for _, args := range [][]string{{"--to", "9"}, {"--diff", "1", "9"}, {"--diff", "9,12"}} {
		out, _, err := runLog(t, "", append(append([]string{"replay", "agent/c1"}, args...), local...)...)
		if err == nil || !strings.Contains(err.Error(), "seq 9 is past the end of agent/c1, seq "+head) {
			t.Errorf("replay %v: %v\n%s", args, err, out)
		}
	}
	// At the end itself both work.
	if out, _, err := runLog(t, "", append([]string{"replay", "agent/c1", "--to", head}, local...)...); err != nil || !strings.Contains(out, `"count":6`) {
		t.Errorf("replay --to %s: %v\n%s", head, err, out)
	}
	if out, _, err := runLog(t, "", append([]string{"replay", "agent/c1", "--diff", "2," + head}, local...)...); err != nil || !strings.Contains(out, "1 -> 6") {
		t.Errorf("replay --diff 2,%s: %v\n%s", head, err, out)
	}
}

// TestConvShowAtPastTheEnd: --at past the conversation's last event is an
// error naming where it ends, not the model at the end.
func TestConvShowAtPastTheEnd(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := t.TempDir()
	seedConversation(t, dir) // 5 events
	off := []string{"--data-dir", dir}
	out, err := runRoot(t, append([]string{"conv", "show", "p1/c1", "--at", "9"}, off...)...)
	if err == nil || !strings.Contains(err.Error(), "seq 9 is past the end of p1/c1, seq 5") {
		t.Errorf("conv show --at 9: %v\n%s", err, out)
	}
	if out, err := runRoot(t, append([]string{"conv", "show", "p1/c1", "--at", "5"}, off...)...); err != nil || !strings.Contains(out, "cat") {
		t.Errorf("conv show --at 5: %v\n%s", err, out)
	}
}

func TestBenchRefusesCountsBelowOne(t *testing.T) {
	for _, flag := range []string{"--msgs", "--calls", "--publishers", "--agents", "--fanout-agents", "--window", "--msg-size"} {
		for _, v := range []string{"0", "-3"} {
			out, err := runRoot(t, "bench", flag, v, "--data-dir", t.TempDir())
			if err == nil || !strings.Contains(err.Error(), flag+" "+v) || !strings.Contains(err.Error(), "1 or more") {
				t.Errorf("bench %s %s: %v\n%s", flag, v, err, out)
			}
		}
	}
}

// TestSchemaLsListsEveryLifecycleSignal: every lifecycle signal the node
// emits on <prefix>.emit.<id>.<type> has a schema.
func TestSchemaLsListsEveryLifecycleSignal(t *testing.T) {
	out, err := runRoot(t, "schema", "ls")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"jido.agent.started", "jido.agent.stopped", "jido.agent.child.started",
		"jido.agent.child.exit", "jido.agent.orphaned", "jido.agent.error"} {
		if !strings.Contains(out, typ+" ") {
			t.Errorf("schema ls lacks %s:\n%s", typ, out)
		}
	}
}

func TestConvSendSaysWhichIDs(t *testing.T) {
	c := findCmd(t, newRootCmd(), "conv send")
	if !strings.Contains(c.Long, "agent start --id") {
		t.Errorf("conv send's help does not say which ids it takes:\n%s", c.Long)
	}
	out, err := runRoot(t, "conv", "send", "p.x/c1", "hi", "--nats-url", nobody)
	if err == nil || !strings.Contains(err.Error(), "p.x/c1") || strings.Contains(err.Error(), "no jido-bus node") {
		t.Errorf("conv send to an id that is no agent id: %v\n%s", err, out)
	}
}
