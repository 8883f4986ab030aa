package tools

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRunnerUnrecordedCall: a call whose start cannot be recorded does
// not run, and one whose outcome cannot be recorded is never answered
// with that outcome: both are unavailable, the second saying that the
// tool ran.
func TestRunnerUnrecordedCall(t *testing.T) {
	var ran atomic.Int32
	ok := func(context.Context, *Call) (any, error) { ran.Add(1); return "done", nil }
	bad := func(context.Context, *Call) (any, error) {
		ran.Add(1)
		return nil, Errorf(ReasonNoMatch, "nothing to edit")
	}
	outer := func(ctx context.Context, c *Call) (any, error) {
		res, err := c.Run(ctx, ToolCall{Name: "inner"})
		if err != nil {
			return nil, err
		}
		return res.Data, nil
	}
	f := newFixture(t, nil, nil, Options{}, custom("ok", ok), custom("bad", bad), custom("inner", ok), custom("outer", outer))
	for _, c := range []struct {
		refuse, tool string
		runs         int32
		says         string
		saw          []string
	}{
		{"started", "ok", 0, "not run", nil},
		{"completed", "ok", 1, "ran, but its outcome could not be recorded", []string{"started ok"}},
		{"failed", "bad", 1, "no_match: nothing to edit", []string{"started bad"}},
		// A child whose start fails is not run, and its parent fails with
		// its unavailable.
		{"started inner", "outer", 0, "tool inner not run", []string{"started outer", "failed outer"}},
		// A child whose outcome is not recorded ran; its parent is told.
		{"completed inner", "outer", 1, "its effects", []string{"started outer", "started inner", "failed outer"}},
	} {
		t.Run(c.refuse+" "+c.tool, func(t *testing.T) {
			f.obs.refuseFrom(c.refuse)
			defer f.obs.refuseFrom("")
			before, seen := ran.Load(), len(f.obs.got())
			res, err := f.call(t, c.tool, map[string]any{})
			if typ := errType(err); typ != ReasonUnavailable {
				t.Fatalf("%s with %s refused: %v (type %q), want %s", c.tool, c.refuse, err, typ, ReasonUnavailable)
			}
			if res.OK || res.Error == nil || res.Error.Type != ReasonUnavailable || len(res.Data) != 0 {
				t.Fatalf("result %+v, want a failed one without data", res)
			}
			if !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "the log is full") {
				t.Fatalf("the error does not say what happened (%q) and why: %v", c.says, err)
			}
			if n := ran.Load() - before; n != c.runs {
				t.Fatalf("the tool ran %d times, want %d", n, c.runs)
			}
			if got := f.obs.got()[seen:]; !reflect.DeepEqual(got, c.saw) && (len(got) != 0 || len(c.saw) != 0) {
				t.Fatalf("recorded %v, want %v", got, c.saw)
			}
		})
	}
}

// fullStore is an ArtifactStore on a full disk.
type fullStore struct{}

func (fullStore) Put([]byte, string) (ArtifactRef, error) {
	return ArtifactRef{}, errors.New("write sha256/ab/abcd.tmp: no space left on device")
}

// TestRunnerArtifactStoreFull: an output that cannot be stored as an
// artifact is unavailable saying to free space (it was internal, the
// word for a bug), and its failure is what the log records.
func TestRunnerArtifactStoreFull(t *testing.T) {
	big := strings.Repeat("a line of a large file\n", 200)
	f := newFixture(t, map[string]string{"big.txt": big}, nil, Options{OutputCap: 1024, Artifacts: fullStore{}})
	e := f.fail(t, "read_file", map[string]any{"path": "big.txt"}, ReasonUnavailable)
	if !strings.Contains(e.Message, "no space left on device") || !strings.Contains(e.Message, "free space") {
		t.Fatalf("the error does not say why and what to do: %v", e)
	}
	if got := f.obs.got(); len(got) != 2 || got[1] != "failed read_file" {
		t.Fatalf("recorded %v, want the call failed", got)
	}
}
