package projects_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/eventlog"
	"github.com/jido-bus/jido-bus/internal/testkit"
	"github.com/jido-bus/jido-bus/node"
	"github.com/jido-bus/jido-bus/projects"
	"github.com/jido-bus/jido-bus/projects/tools"
)

// startNode starts a node in process on dataDir, its watcher on or off.
func startNode(t *testing.T, dataDir string, watch bool) *node.Node {
	t.Helper()
	n, err := node.Start(context.Background(), node.Config{
		DataDir: dataDir, NoSync: true,
		NATS: node.NATSConfig{DontListen: true},
		Projects: func(c *projects.Config) {
			c.NoWatch = !watch
			c.Debounce = 20 * time.Millisecond
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func closeNode(t *testing.T, n *node.Node) {
	t.Helper()
	if err := n.Shutdown(context.Background()); err != nil {
		t.Errorf("close node: %v", err)
	}
}

// writeFiles writes files (path → content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// projectDir is a project folder with a skill, a command and a file.
func projectDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.go":                      "package main\n",
		".jido/skills/review/SKILL.md": "---\nname: review\ndescription: Review a change.\n---\nRead the diff.\n",
		".jido/commands/hello.md":      "---\ndescription: Say hello.\n---\nHello $ARGUMENTS\n",
	})
	return dir
}

// entries reads project id's stream: the types of the entries the engine
// sent (the runtime's own jido.* records left out), with their data.
func entries(t *testing.T, n *node.Node, id string) ([]string, []json.RawMessage) {
	t.Helper()
	var types []string
	var data []json.RawMessage
	for e, err := range n.Log().ReadStream(projects.Stream(id), eventlog.ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(e.Event.Type(), "jido.") {
			continue
		}
		types = append(types, e.Event.Type())
		data = append(data, e.Event.Data())
	}
	return types, data
}

func TestOpenGetListClose(t *testing.T) {
	n := startNode(t, t.TempDir(), false)
	defer closeNode(t, n)
	e := n.Projects()
	dir := projectDir(t)
	ctx := context.Background()

	info, err := e.Open(ctx, projects.OpenRequest{Root: dir, ID: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if info.ID != "p1" || info.Root != real || info.DataDir != ".jido" || info.Counts.Skills != 1 || info.Counts.Commands != 1 || info.Status != projects.StatusOpen || info.PolicySource != projects.PolicyDefault {
		t.Fatalf("open: %+v", info)
	}
	for _, d := range []string{"skills", "commands", "workflows", "skill_graph", "state"} {
		if fi, err := os.Stat(filepath.Join(dir, ".jido", d)); err != nil || !fi.IsDir() {
			t.Errorf(".jido/%s not created: %v", d, err)
		}
	}
	if got, err := e.Get("p1"); err != nil || got.Digest != info.Digest || got.Tools == 0 {
		t.Fatalf("get: %+v %v", got, err)
	}
	if ls := e.List(); len(ls) != 1 || ls[0].ID != "p1" {
		t.Fatalf("ls: %+v", ls)
	}
	st, err := n.Runtime().State("p1")
	if err != nil || st.Type != projects.AgentType || st.Stream != "project/p1" {
		t.Fatalf("agent: %+v %v", st, err)
	}
	var state struct {
		Root    string `json:"root"`
		DataDir string `json:"data_dir"`
		Assets  struct {
			Digest  string `json:"digest"`
			Version int    `json:"version"`
		} `json:"assets"`
		Policy map[string]any `json:"policy"`
	}
	if err := json.Unmarshal(st.State, &state); err != nil {
		t.Fatal(err)
	}
	if state.Root != real || state.DataDir != ".jido" || state.Assets.Digest != info.Digest || state.Assets.Version != 1 || state.Policy["tools"] == nil {
		t.Fatalf("agent state: %s", st.State)
	}

	if err := e.CloseProject(ctx, "p1", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Get("p1"); bus.ErrorType(err) != bus.ReasonNotFound {
		t.Fatalf("get after close: %v", err)
	}
	types, _ := entries(t, n, "p1")
	want := []string{projects.TypeStarted, projects.TypeAssetsLoaded, projects.TypeStopped}
	if !slices.Equal(types, want) {
		t.Fatalf("stream: %v, want %v", types, want)
	}
	// The root is free again, under the same id.
	if _, err := e.Open(ctx, projects.OpenRequest{Root: dir, ID: "p1"}); err != nil {
		t.Fatalf("reopen after close: %v", err)
	}
}

func TestOpenRefusesBadRoots(t *testing.T) {
	dataDir := t.TempDir()
	n := startNode(t, dataDir, false)
	defer closeNode(t, n)
	e := n.Projects()
	ctx := context.Background()

	file := filepath.Join(t.TempDir(), "file")
	writeFiles(t, filepath.Dir(file), map[string]string{"file": "x"})
	unreadable := t.TempDir()
	if err := os.Chmod(unreadable, 0o000); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(unreadable, 0o755) })
	inside := filepath.Join(dataDir, "sub")
	if err := os.MkdirAll(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	taken := projectDir(t)
	if _, err := e.Open(ctx, projects.OpenRequest{Root: taken, ID: "first"}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(taken, link); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name, root, id, want string
	}{
		{"missing", filepath.Join(t.TempDir(), "nope"), "", bus.ReasonNotFound},
		{"a file", file, "", bus.ReasonInvalidRequest},
		{"the file system root", "/", "", bus.ReasonInvalidRequest},
		{"the node's data dir", dataDir, "", bus.ReasonInvalidRequest},
		{"inside the node's data dir", inside, "", bus.ReasonInvalidRequest},
		{"around the node's data dir", filepath.Dir(dataDir), "", bus.ReasonInvalidRequest},
		{"the same root again", taken, "second", "already_exists"},
		{"the same root through a link", link, "second", "already_exists"},
		{"a taken id", projectDir(t), "first", "already_exists"},
		{"an id with a slash", projectDir(t), "a/b", bus.ReasonInvalidRequest},
		{"an empty root", "", "", bus.ReasonInvalidRequest},
	}
	if os.Geteuid() != 0 { // root reads any folder
		cases = append(cases, struct{ name, root, id, want string }{"unreadable", unreadable, "", bus.ReasonInvalidRequest})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.Open(ctx, projects.OpenRequest{Root: c.root, ID: c.id})
			if bus.ErrorType(err) != c.want {
				t.Fatalf("open %q: %v, want type %s", c.root, err, c.want)
			}
		})
	}
	if ls := e.List(); len(ls) != 1 {
		t.Fatalf("refused opens left projects behind: %+v", ls)
	}
}

func TestToolCallsAreInTheStream(t *testing.T) {
	n := startNode(t, t.TempDir(), false)
	defer closeNode(t, n)
	e := n.Projects()
	ctx := context.Background()
	dir := projectDir(t)
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret": "s3cret"})
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Open(ctx, projects.OpenRequest{Root: dir, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	res, err := e.CallTool(ctx, "p1", tools.ToolCall{ID: "c1", Name: "read_file", Args: json.RawMessage(`{"path":"main.go"}`)})
	if err != nil || !strings.Contains(string(res.Data), "package main") {
		t.Fatalf("read_file: %+v %v", res, err)
	}
	_, err = e.CallTool(ctx, "p1", tools.ToolCall{ID: "c2", Name: "read_file", Args: json.RawMessage(`{"path":"escape"}`)})
	if te, ok := errors.AsType[*tools.Error](err); !ok || te.Type != tools.ReasonOutsideRoot {
		t.Fatalf("read through a link out of the root: %v, want outside_root", err)
	}

	types, data := entries(t, n, "p1")
	want := []string{projects.TypeStarted, projects.TypeAssetsLoaded,
		projects.TypeToolStarted, projects.TypeToolCompleted, projects.TypeToolStarted, projects.TypeToolFailed}
	if !slices.Equal(types, want) {
		t.Fatalf("stream: %v, want %v", types, want)
	}
	var started, completed, failed projects.ToolData
	for i, v := range []*projects.ToolData{&started, &completed, &failed} {
		if err := json.Unmarshal(data[[]int{2, 3, 5}[i]], v); err != nil {
			t.Fatal(err)
		}
	}
	if started.CallID != "c1" || started.Tool != "read_file" || !strings.Contains(string(started.Args), "main.go") {
		t.Errorf("started: %+v", started)
	}
	if completed.CallID != "c1" || completed.Result != "ok" || completed.Size == 0 {
		t.Errorf("completed: %+v", completed)
	}
	if failed.CallID != "c2" || failed.Result != tools.ReasonOutsideRoot || failed.Error == nil {
		t.Errorf("failed: %+v", failed)
	}
	if strings.Contains(string(data[5]), "s3cret") {
		t.Errorf("the refused file's content reached the log: %s", data[5])
	}
}

func TestReloadRecordsTheDiff(t *testing.T) {
	n := startNode(t, t.TempDir(), false)
	defer closeNode(t, n)
	e := n.Projects()
	ctx := context.Background()
	dir := projectDir(t)
	if _, err := e.Open(ctx, projects.OpenRequest{Root: dir, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	if r, err := e.Reload(ctx, "p1"); err != nil || r.Changed {
		t.Fatalf("reload of nothing: %+v %v", r, err)
	}
	writeFiles(t, dir, map[string]string{
		".jido/commands/hello.md": "---\ndescription: Say hello loudly.\n---\nHELLO $ARGUMENTS\n",
		".jido/commands/bye.md":   "Bye.\n",
	})
	r, err := e.Reload(ctx, "p1")
	if err != nil || !r.Changed || !slices.Equal(r.Changes.Commands.Added, []string{"bye"}) || !slices.Equal(r.Changes.Commands.Changed, []string{"hello"}) {
		t.Fatalf("reload: %+v %v", r, err)
	}
	if ts, _ := e.Tools("p1"); !slices.ContainsFunc(ts, func(s tools.Spec) bool { return s.Name == "command_bye" }) {
		t.Errorf("the catalog has no command_bye after the reload")
	}
	types, data := entries(t, n, "p1")
	if want := []string{projects.TypeStarted, projects.TypeAssetsLoaded, projects.TypeAssetsReloaded}; !slices.Equal(types, want) {
		t.Fatalf("stream: %v, want %v (a reload that changes nothing appends nothing)", types, want)
	}
	var d projects.AssetsData
	if err := json.Unmarshal(data[2], &d); err != nil {
		t.Fatal(err)
	}
	if d.Version != 2 || d.Changes == nil || !slices.Equal(d.Changes.Commands.Added, []string{"bye"}) {
		t.Fatalf("reloaded: %s", data[2])
	}
}

func TestWatcherRecordsAnEdit(t *testing.T) {
	n := startNode(t, t.TempDir(), true)
	defer closeNode(t, n)
	e := n.Projects()
	dir := projectDir(t)
	info, err := e.Open(context.Background(), projects.OpenRequest{Root: dir, ID: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	if !info.Watching {
		t.Fatal("the project is not watched")
	}
	writeFiles(t, dir, map[string]string{".jido/commands/new.md": "New.\n"})
	testkit.EventuallyNil(t, projects.TypeAssetsReloaded+" after an edit", func() error {
		if types, _ := entries(t, n, "p1"); !slices.Contains(types, projects.TypeAssetsReloaded) {
			return fmt.Errorf("stream: %v", types)
		}
		return nil
	})
}

func TestRestartBringsProjectsBack(t *testing.T) {
	dataDir := t.TempDir()
	n := startNode(t, dataDir, false)
	e := n.Projects()
	ctx := context.Background()
	dir, gone := projectDir(t), projectDir(t)
	if _, err := e.Open(ctx, projects.OpenRequest{Root: dir, ID: "p1", Policy: json.RawMessage(`{"tools":{"*":"allow","write_file":"deny"}}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Open(ctx, projects.OpenRequest{Root: gone, ID: "p2"}); err != nil {
		t.Fatal(err)
	}
	closeNode(t, n)

	writeFiles(t, dir, map[string]string{".jido/commands/later.md": "Added while the node was down.\n"})
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	n = startNode(t, dataDir, false)
	defer closeNode(t, n)
	e = n.Projects()
	ls := e.List()
	if len(ls) != 2 {
		t.Fatalf("after restart: %+v", ls)
	}
	p1, p2 := ls[0], ls[1]
	if p1.Status != projects.StatusOpen || p1.Counts.Commands != 2 || p1.Version != 2 || p1.PolicySource != projects.PolicyFromRequest {
		t.Fatalf("p1 after restart: %+v", p1)
	}
	if p2.Status != projects.StatusError || p2.Error == nil || p2.Error.Type != bus.ReasonNotFound {
		t.Fatalf("p2, whose root vanished: %+v", p2)
	}
	// The policy came back as it was opened.
	if ts, _ := e.Tools("p1"); slices.ContainsFunc(ts, func(s tools.Spec) bool { return s.Name == "write_file" }) {
		t.Errorf("write_file is offered after the restart; the policy denied it")
	}
	if res, err := e.CallTool(ctx, "p1", tools.ToolCall{Name: "command_later"}); err != nil || !strings.Contains(string(res.Data), "Added while") {
		t.Fatalf("command_later: %+v %v", res, err)
	}
	types, _ := entries(t, n, "p1")
	if want := []string{projects.TypeStarted, projects.TypeAssetsLoaded, projects.TypeStarted, projects.TypeAssetsReloaded, projects.TypeToolStarted, projects.TypeToolCompleted}; !slices.Equal(types, want) {
		t.Fatalf("stream: %v, want %v", types, want)
	}
	if err := e.CloseProject(ctx, "p2", "root gone"); err != nil {
		t.Fatalf("close a project in error: %v", err)
	}
	// Its agent stops as it decides the close.
	testkit.Eventually(t, "the agent of a closed project to stop", func() bool {
		_, err := n.Runtime().State("p2")
		return err != nil
	})
}

// TestAgentRefusesAnotherRoot: the root is fixed when the agent starts; a
// project.started naming another (sent past the engine, as the agent API
// could) is refused and changes nothing, so a restart reopens the root
// the project was opened on.
func TestAgentRefusesAnotherRoot(t *testing.T) {
	n := startNode(t, t.TempDir(), false)
	defer closeNode(t, n)
	dir := projectDir(t)
	if _, err := n.Projects().Open(context.Background(), projects.OpenRequest{Root: dir, ID: "p1"}); err != nil {
		t.Fatal(err)
	}
	sig, err := bus.NewJSONSignal(projects.TypeStarted, projects.StartedData{Root: "/etc", DataDir: ".jido"})
	if err != nil {
		t.Fatal(err)
	}
	sig.SetID("forged")
	sig.SetSource("/somebody")
	if _, err := n.Runtime().Call(context.Background(), "p1", sig); bus.ErrorType(err) != projects.ReasonWrongRoot {
		t.Fatalf("project.started with another root: %v, want %s", err, projects.ReasonWrongRoot)
	}
	st, _ := n.Runtime().State("p1")
	real, _ := filepath.EvalSymlinks(dir)
	if !strings.Contains(string(st.State), `"root":"`+real+`"`) {
		t.Fatalf("state after the refusal: %s", st.State)
	}
}
