package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jido-bus/jido-bus/projects/policy"
	"go.uber.org/goleak"
)

// TestMain lets the test binary stand in for jido-bus: policy.Exec
// re-executes the running binary with policy.HelperArg, and that process
// must become the sandbox-exec helper (as cmd/jido-bus does).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == policy.HelperArg {
		os.Exit(policy.HelperMain())
	}
	goleak.VerifyTestMain(m)
}

// recorder is an Observer that keeps every event in order: a start that
// comes with its outcome (Event.Started) before it, the two as one
// commit. While refuse is set, an event of that kind ("started",
// "completed", "failed"), or of that kind and tool ("started inner"), is
// not kept, nor what is committed with it, and its method returns an
// error, as a log that cannot write does. commits counts the commits.
type recorder struct {
	mu      sync.Mutex
	events  []string
	last    []Event
	commits []string
	refuse  string
}

func (r *recorder) add(kind string, e Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	kinds, evs := []string{kind}, []Event{e}
	if e.Started != nil {
		kinds, evs = []string{"started", kind}, []Event{*e.Started, e}
	}
	for i, k := range kinds {
		if r.refuse != "" && (r.refuse == k || r.refuse == k+" "+evs[i].Tool) {
			return errors.New("the log is full")
		}
	}
	var commit []string
	for i, k := range kinds {
		r.events = append(r.events, k+" "+evs[i].Tool)
		commit = append(commit, k+" "+evs[i].Tool)
	}
	r.commits = append(r.commits, strings.Join(commit, "+"))
	r.last = append(r.last, evs...)
	return nil
}
func (r *recorder) ToolStarted(e Event) error   { return r.add("started", e) }
func (r *recorder) ToolCompleted(e Event) error { return r.add("completed", e) }
func (r *recorder) ToolFailed(e Event) error    { return r.add("failed", e) }

func (r *recorder) refuseFrom(kind string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refuse = kind
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

type fixture struct {
	dir    string
	root   *policy.Root
	runner *Runner
	obs    *recorder
}

// newFixture opens a project root holding files (path → content) and a
// runner over Builtins and extra tools, with policy p (Default when nil).
func newFixture(t testing.TB, files map[string]string, p *policy.Policy, opts Options, extra ...Tool) *fixture {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := policy.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	if p == nil {
		p = policy.Default()
	}
	cat, err := NewCatalog(append(Builtins(Limits{}), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	obs := &recorder{}
	opts.Sandbox = &policy.Sandbox{Root: root, Policy: p}
	opts.Catalog = cat
	opts.Observer = obs
	r, err := NewRunner(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{dir: dir, root: root, runner: r, obs: obs}
}

// call runs name with args (any JSON-marshallable value).
func (f *fixture) call(t *testing.T, name string, args any) (Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return f.runner.Run(context.Background(), ToolCall{Name: name, Args: raw})
}

// ok runs a call that must succeed and decodes its data into out.
func (f *fixture) ok(t *testing.T, name string, args, out any) {
	t.Helper()
	res, err := f.call(t, name, args)
	if err != nil || !res.OK {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	if out != nil {
		if err := json.Unmarshal(res.Data, out); err != nil {
			t.Fatalf("%s: data %s: %v", name, res.Data, err)
		}
	}
	f.checkOutput(t, name, res)
}

// checkOutput validates a result's data against the tool's output schema.
func (f *fixture) checkOutput(t *testing.T, name string, res Result) {
	t.Helper()
	tool, _ := f.runner.Catalog().Get(name)
	if len(tool.OutputSchema) == 0 || len(res.Artifacts) > 0 {
		return
	}
	s, err := schemaCache{}.compile("urn:test:"+name, tool.OutputSchema)
	if err != nil {
		t.Fatal(err)
	}
	v, err := unmarshalAny(res.Data)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s: output %s does not match its output schema: %v", name, res.Data, err)
	}
}

// fail runs a call that must fail with an error of type typ.
func (f *fixture) fail(t *testing.T, name string, args any, typ string) *Error {
	t.Helper()
	res, err := f.call(t, name, args)
	if res.OK || err == nil {
		t.Fatalf("%s %v: succeeded with %s, want %s", name, args, res.Data, typ)
	}
	var e *Error
	if !errors.As(err, &e) || e.Type != typ || res.Error != e {
		t.Fatalf("%s %v: error %v, want type %s", name, args, err, typ)
	}
	if e.Message == "" {
		t.Fatalf("%s: error without a message", name)
	}
	return e
}
