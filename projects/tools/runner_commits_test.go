package tools

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jido-bus/jido-bus/projects/policy"
)

// TestRunnerCommitsByWhatToolsChange: what must be durable before what
// decides the commits of a call. A tool that declares it only reads, and
// any refused call, changes nothing: its start and its outcome are one
// commit, after it ran. A tool that writes, runs or calls others has its
// start committed before it runs and its outcome after. What a caller's
// WithOutcome returns rides with the outcome, in its commit.
func TestRunnerCommitsByWhatToolsChange(t *testing.T) {
	noop := func(context.Context, *Call) (any, error) { return "done", nil }
	reader := custom("reader", noop)
	reader.Safety = Safety{Reads: true}
	caller := custom("caller", noop)
	caller.Safety, caller.Uses = Safety{Reads: true}, []string{"read_file"}
	undeclared := custom("undeclared", noop) // declares nothing: it may change things
	p := policy.Default()
	p.Tools = map[string]policy.Mode{"*": policy.ModeAllow, "run_command": policy.ModeDeny}
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, p, Options{}, reader, caller, undeclared)

	for _, c := range []struct {
		tool string
		args any
		want []string
	}{
		{"read_file", map[string]any{"path": "a.txt"}, []string{"started read_file+completed read_file"}},
		{"list_dir", map[string]any{"path": "."}, []string{"started list_dir+completed list_dir"}},
		{"reader", map[string]any{}, []string{"started reader+completed reader"}},
		{"read_file", map[string]any{"path": "../x"}, []string{"started read_file+failed read_file"}},
		{"write_file", map[string]any{"path": "b.txt", "content": "x"}, []string{"started write_file", "completed write_file"}},
		// Refused before anything ran: one commit, whatever the tool.
		{"write_file", map[string]any{"nope": 1}, []string{"started write_file+failed write_file"}},
		{"run_command", map[string]any{"program": "true"}, []string{"started run_command+failed run_command"}},
		{"caller", map[string]any{}, []string{"started caller", "completed caller"}},
		{"undeclared", map[string]any{}, []string{"started undeclared", "completed undeclared"}},
	} {
		before := len(f.obs.commits)
		var with atomic.Value
		raw, _ := json.Marshal(c.args)
		res, _ := f.runner.Run(context.Background(), ToolCall{Name: c.tool, Args: raw, WithOutcome: func(r Result) any {
			rec := "record of " + c.tool + map[bool]string{true: " ok", false: " failed"}[r.OK]
			with.Store(rec)
			return rec
		}})
		if got := f.obs.commits[before:]; !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %v (ok %v): commits %q, want %q", c.tool, c.args, res.OK, got, c.want)
		}
		last := f.obs.last[len(f.obs.last)-1]
		if last.With == nil || last.With != with.Load() {
			t.Errorf("%s: the outcome carries %v, want what WithOutcome returned (%v)", c.tool, last.With, with.Load())
		}
		if w, _ := last.With.(string); res.OK != strings.HasSuffix(w, " ok") {
			t.Errorf("%s: WithOutcome saw ok=%v, the call answered ok=%v", c.tool, !res.OK, res.OK)
		}
	}
}

// TestRunnerReadOnlyUnrecorded: a tool that changes nothing runs before
// anything of it is committed; when its start and outcome cannot be, the
// caller is answered unavailable (never with the result the log does not
// show) and the log has nothing of the call.
func TestRunnerReadOnlyUnrecorded(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "hello\n"}, nil, Options{})
	for _, refuse := range []string{"started", "completed"} {
		f.obs.refuseFrom(refuse)
		before := len(f.obs.got())
		res, err := f.call(t, "read_file", map[string]any{"path": "a.txt"})
		f.obs.refuseFrom("")
		if typ := errType(err); typ != ReasonUnavailable || res.OK || len(res.Data) != 0 {
			t.Fatalf("refusing %s: %+v %v, want unavailable without data", refuse, res, err)
		}
		if !strings.Contains(err.Error(), "outcome could not be recorded") || !strings.Contains(err.Error(), "the log is full") {
			t.Fatalf("refusing %s: the error does not say what happened and why: %v", refuse, err)
		}
		if got := f.obs.got()[before:]; len(got) != 0 {
			t.Fatalf("refusing %s: recorded %v, want nothing", refuse, got)
		}
	}
}
