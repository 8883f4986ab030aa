package projects_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	agentruntime "github.com/jido-bus/jido-bus/agents/runtime"
	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects"
)

// TestOpenRefusesNestedRoots: a root inside another open project's root,
// or holding one, is refused in either order of opening — the outer
// project's write_file would otherwise rewrite the inner one's .jido/ —
// and a sibling, or the same folder once the other project is closed, is
// not.
func TestOpenRefusesNestedRoots(t *testing.T) {
	n := startNode(t, t.TempDir(), false)
	defer closeNode(t, n)
	e := n.Projects()
	ctx := context.Background()
	outer := projectDir(t)
	inner := filepath.Join(outer, "sub", "inner")
	sibling := filepath.Join(filepath.Dir(outer), filepath.Base(outer)+"-sibling")
	for _, d := range []string{inner, sibling} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "link-to-inner")
	if err := os.Symlink(inner, link); err != nil {
		t.Fatal(err)
	}

	open := func(root, id string) error {
		_, err := e.Open(ctx, projects.OpenRequest{Root: root, ID: id})
		return err
	}
	// Outer first, then inner (directly and through a link).
	if err := open(outer, "outer"); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{inner, link} {
		err := open(root, "inner")
		if bus.ErrorType(err) != bus.ReasonInvalidRequest || !strings.Contains(err.Error(), "inside the root") || !strings.Contains(err.Error(), "outer") {
			t.Fatalf("open %s inside open project outer: %v, want invalid_request naming outer", root, err)
		}
	}
	// A sibling whose name starts like the outer one's is no child of it.
	if err := open(sibling, "sibling"); err != nil {
		t.Fatalf("open a sibling of outer: %v", err)
	}
	// Inner first, then outer.
	if err := e.CloseProject(ctx, "outer", ""); err != nil {
		t.Fatal(err)
	}
	if err := open(inner, "inner"); err != nil {
		t.Fatal(err)
	}
	err := open(outer, "outer2")
	if bus.ErrorType(err) != bus.ReasonInvalidRequest || !strings.Contains(err.Error(), "holds the root") || !strings.Contains(err.Error(), "inner") {
		t.Fatalf("open outer around open project inner: %v, want invalid_request naming inner", err)
	}
	if ls := e.List(); len(ls) != 2 {
		t.Fatalf("refused opens left projects behind: %+v", ls)
	}
}

// TestOpenRefusesTheHomeFolder: the home folder of the node's user, and a
// folder holding it, are refused as roots (a project's tools would reach
// its keys and credentials); a folder inside it is a project like any
// other.
func TestOpenRefusesTheHomeFolder(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home", "me")
	inside := filepath.Join(home, "src", "app")
	if err := os.MkdirAll(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	n := startNode(t, t.TempDir(), false)
	defer closeNode(t, n)
	e := n.Projects()
	for _, root := range []string{home, filepath.Dir(home)} {
		_, err := e.Open(context.Background(), projects.OpenRequest{Root: root})
		if bus.ErrorType(err) != bus.ReasonInvalidRequest || !strings.Contains(err.Error(), "home folder") {
			t.Fatalf("open %s (HOME=%s): %v, want invalid_request naming the home folder", root, home, err)
		}
	}
	if _, err := e.Open(context.Background(), projects.OpenRequest{Root: inside, ID: "app"}); err != nil {
		t.Fatalf("open a folder inside the home folder: %v", err)
	}
}

// bindMount binds src onto dst for the rest of the test, or skips it
// where the test may not mount (not Linux, not root, no CAP_SYS_ADMIN).
func bindMount(t *testing.T, src, dst string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("bind mounts are a Linux test here")
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", src, dst).CombinedOutput(); err != nil {
		t.Skipf("cannot bind-mount here (%v: %s): run as root to test bind mounts", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dst).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dst, err, out)
		}
	})
}

// TestOpenSeesThroughBindMounts: the same folder under another path (a
// bind mount of it), and a bind mount of a folder inside an open
// project's root — whose path has nothing of the outer root — are
// refused like the folder itself, in either order.
func TestOpenSeesThroughBindMounts(t *testing.T) {
	n := startNode(t, t.TempDir(), false)
	defer closeNode(t, n)
	e := n.Projects()
	ctx := context.Background()
	outer := projectDir(t)
	inner := filepath.Join(outer, "inner")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	mounts := t.TempDir()
	sameAsOuter, sameAsInner := filepath.Join(mounts, "outer"), filepath.Join(mounts, "inner")
	bindMount(t, outer, sameAsOuter)
	bindMount(t, inner, sameAsInner)

	if _, err := e.Open(ctx, projects.OpenRequest{Root: outer, ID: "outer"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Open(ctx, projects.OpenRequest{Root: sameAsOuter, ID: "again"}); bus.ErrorType(err) != "already_exists" || !strings.Contains(err.Error(), "same folder") {
		t.Fatalf("open the outer root through a bind mount: %v, want already_exists naming the same folder", err)
	}
	if _, err := e.Open(ctx, projects.OpenRequest{Root: sameAsInner, ID: "inner"}); bus.ErrorType(err) != bus.ReasonInvalidRequest {
		t.Fatalf("open a bind mount of a folder inside outer: %v, want invalid_request", err)
	}
	if err := e.CloseProject(ctx, "outer", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Open(ctx, projects.OpenRequest{Root: sameAsInner, ID: "inner"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Open(ctx, projects.OpenRequest{Root: outer, ID: "outer"}); bus.ErrorType(err) != bus.ReasonInvalidRequest {
		t.Fatalf("open outer around a bind mount of its folder inner: %v, want invalid_request", err)
	}
}

// TestRestoreRefusesNestedRoots: an older node could leave two nested
// projects open; after a restart the inner one is open and the outer one
// (first by id) is listed with the error, its tools refused, until it is
// closed: its tools would reach the inner one's .jido/.
func TestRestoreRefusesNestedRoots(t *testing.T) {
	dataDir := t.TempDir()
	n := startNode(t, dataDir, false)
	outer := projectDir(t)
	inner := filepath.Join(outer, "inner")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := n.Projects().Open(ctx, projects.OpenRequest{Root: inner, ID: "b-inner"}); err != nil {
		t.Fatal(err)
	}
	// The older node's open: the project agent started as Open starts
	// it (b-inner's state, another root), past today's check.
	real, err := filepath.EvalSymlinks(outer)
	if err != nil {
		t.Fatal(err)
	}
	info, err := n.Runtime().State("b-inner")
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(info.State, &st); err != nil {
		t.Fatal(err)
	}
	initial := map[string]any{"root": real, "data_dir": st["data_dir"], "policy": st["policy"], "policy_source": st["policy_source"]}
	if _, err := n.Runtime().Start(ctx, agentruntime.StartRequest{Type: projects.AgentType, ID: "a-outer", InitialState: initial}); err != nil {
		t.Fatal(err)
	}
	closeNode(t, n)

	n = startNode(t, dataDir, false)
	defer closeNode(t, n)
	ls := n.Projects().List() // by id: a-outer, b-inner
	if len(ls) != 2 || ls[1].ID != "b-inner" || ls[1].Status != projects.StatusOpen {
		t.Fatalf("after restart: %+v, want b-inner open", ls)
	}
	if o := ls[0]; o.Status != projects.StatusError || o.Error == nil || !strings.Contains(o.Error.Message, "b-inner") {
		t.Fatalf("a-outer, around b-inner: %+v, want listed with an error naming b-inner", o)
	}
	if _, err := n.Projects().Reload(ctx, "a-outer"); bus.ErrorType(err) != bus.ReasonUnavailable {
		t.Fatalf("reload the refused project: %v, want unavailable", err)
	}
}
