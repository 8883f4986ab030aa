package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jido-bus/jido-bus/internal/testkit"
)

// The README's recipes run here as they are written, and so do those of
// docs/ (the README points to them, and keeping them there keeps the
// front page short). A shell block that follows a line
// <!-- recipe: NAME --> is cut into commands (a line ending
// in \ goes on); each runs with bash in a folder whose bin/ holds the
// binaries under test, against a node of the test's own (NATS_URL), and a
// comment line holding a JSON object right after a command is its expected
// output, compared as JSON. Only the addresses of the README's defaults
// are replaced by the test's own.

// recipe is one marked shell block of the README or of a page of docs/.
type recipe struct {
	name     string
	file     string // README.md or docs/PAGE.md
	line     int
	commands []recipeCommand
}

type recipeCommand struct {
	line   int
	text   string
	expect []string // JSON objects, one per line
}

func readRecipes(t *testing.T) map[string]recipe {
	t.Helper()
	if checkoutRootErr != nil {
		t.Fatal(checkoutRootErr)
	}
	pages, err := filepath.Glob(filepath.Join(checkoutRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]recipe{}
	for _, page := range append([]string{filepath.Join(checkoutRoot, "README.md")}, pages...) {
		rel, _ := filepath.Rel(checkoutRoot, page)
		for name, rc := range readRecipesOf(t, page, rel) {
			if prev, ok := out[name]; ok {
				t.Fatalf("recipe %s is in %s:%d and in %s:%d: one name, one recipe", name, prev.file, prev.line, rc.file, rc.line)
			}
			out[name] = rc
		}
	}
	return out
}

// readRecipesOf reads the marked shell blocks of one page.
func readRecipesOf(t *testing.T, path, rel string) map[string]recipe {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]recipe{}
	sc := bufio.NewScanner(f)
	var cur *recipe
	var pending string
	inBlock, n := false, 0
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "<!-- recipe: "):
			name := strings.TrimSuffix(strings.TrimPrefix(line, "<!-- recipe: "), " -->")
			cur = &recipe{name: name, file: rel, line: n}
		case cur != nil && !inBlock && line == "```sh":
			inBlock = true
		case cur != nil && inBlock && line == "```":
			out[cur.name] = *cur
			cur, inBlock = nil, false
		case cur != nil && inBlock:
			trimmed := strings.TrimSpace(line)
			if strings.HasPrefix(trimmed, "# {") {
				if k := len(cur.commands); k > 0 {
					cur.commands[k-1].expect = append(cur.commands[k-1].expect, strings.TrimPrefix(trimmed, "# "))
				}
				continue
			}
			if trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue
			}
			if strings.HasSuffix(line, "\\") {
				pending += strings.TrimSuffix(line, "\\") + " "
				continue
			}
			cur.commands = append(cur.commands, recipeCommand{line: n, text: pending + line})
			pending = ""
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// recipeRig runs commands as a reader of the README would.
type recipeRig struct {
	dir     string            // the working folder, with bin/
	env     []string          // NATS_URL and the isolated HOME
	replace map[string]string // README address → the test's
}

func (r *recipeRig) run(t *testing.T, rc recipe) {
	t.Helper()
	if len(rc.commands) == 0 {
		t.Fatalf("%s:%d: recipe %s has no command", rc.file, rc.line, rc.name)
	}
	for _, c := range rc.commands {
		text := c.text
		for from, to := range r.replace {
			text = strings.ReplaceAll(text, from, to)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-c", text)
		cmd.Dir, cmd.Env = r.dir, r.env
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		cancel()
		t.Logf("%s:%d: %s (%s)", rc.file, c.line, c.text, time.Since(start).Round(time.Millisecond))
		if err != nil {
			t.Fatalf("%s:%d (recipe %s): %s: %v\nstdout: %s\nstderr: %s", rc.file, c.line, rc.name, c.text, err, stdout.String(), stderr.String())
		}
		if len(c.expect) == 0 {
			continue
		}
		var got []string
		for _, l := range strings.Split(stdout.String(), "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "{") {
				got = append(got, l)
			}
		}
		if len(got) != len(c.expect) {
			t.Errorf("%s:%d (recipe %s): %s printed %d JSON lines, the page shows %d:\n%s", rc.file, c.line, rc.name, c.text, len(got), len(c.expect), stdout.String())
			continue
		}
		for i := range got {
			if !sameJSON(got[i], c.expect[i]) {
				t.Errorf("%s:%d (recipe %s): %s printed\n  %s\nthe page shows\n  %s", rc.file, c.line, rc.name, c.text, got[i], c.expect[i])
			}
		}
	}
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	return reflect.DeepEqual(x, y)
}

// TestREADMERecipes runs the README's recipes in the order a reader
// meets them, against one node with the demo project open and its
// gateways on, as `make run` starts it.
func TestREADMERecipes(t *testing.T) {
	recipes := readRecipes(t)
	for _, name := range []string{"quickstart", "publish", "subscribe", "agent", "debug", "instructions", "budget", "a2a", "workflow", "modes", "compact", "rewind", "mcp-servers", "delegate", "hooks", "worktrees", "turn-hooks"} {
		if _, ok := recipes[name]; !ok {
			t.Fatalf("neither README.md nor docs/ has a recipe %q (a shell block after <!-- recipe: %s -->)", name, name)
		}
	}
	demo := t.TempDir()
	if err := exec.Command("cp", "-R", filepath.Join(checkoutRoot, "examples", "demo")+"/.", demo).Run(); err != nil {
		t.Fatal(err)
	}
	node := StartNode(t, tools, t.TempDir(), "--http", "127.0.0.1:0", "--open", demo+"=demo")
	httpAddr := strings.TrimPrefix(httpBase(t, node), "http://")

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"jido-bus": tools.JidoBus, "nats": tools.NATS} {
		if err := os.Symlink(path, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	r := &recipeRig{
		dir: dir,
		env: append(os.Environ(), "NATS_URL="+node.URL),
		replace: map[string]string{
			"127.0.0.1:8080":               httpAddr,
			"~/.local/share/jido-bus/demo": demo,
		},
	}

	r.run(t, recipes["quickstart"])
	r.run(t, recipes["publish"])
	r.run(t, recipes["subscribe"])

	// The agent recipe talks to the example's own node, which the reader
	// started in a terminal of its own: here, the example built and
	// started on a free address.
	agentAddr := freeAddr(t)
	example, err := tools.BuildProgram(t.TempDir(), "./examples/agent")
	if err != nil {
		t.Fatal(err)
	}
	ex := exec.Command(example, "-listen", agentAddr, "-data-dir", t.TempDir())
	var exOut testkit.Buffer
	ex.Stdout, ex.Stderr = &exOut, &exOut
	if err := ex.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = ex.Process.Signal(os.Interrupt)
		_ = ex.Wait()
	}()
	testkit.EventuallyNil(t, "the agent example to say it is up", func() error {
		if out := exOut.String(); !strings.Contains(out, "node up at") {
			return fmt.Errorf("it printed %q", out)
		}
		return nil
	})
	r.replace["127.0.0.1:4223"] = agentAddr
	r.run(t, recipes["agent"])

	r.run(t, recipes["debug"])
	r.run(t, recipes["instructions"])
	r.run(t, recipes["budget"])
	r.run(t, recipes["a2a"])
	r.run(t, recipes["workflow"])
	r.run(t, recipes["modes"])
	// Before hooks too: it runs tools.
	r.run(t, recipes["delegate"])
	r.run(t, recipes["compact"])
	// The reader built examples/mcp-server into bin/ beside jido-bus.
	if _, err := tools.BuildProgram(bin, "./examples/mcp-server"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(bin, "mcp-server"), filepath.Join(bin, "notes-mcp")); err != nil {
		t.Fatal(err)
	}
	r.run(t, recipes["mcp-servers"])
	// Before hooks, whose recipe leaves the demo denying every tool call.
	r.run(t, recipes["rewind"])
	r.run(t, recipes["hooks"])
	r.run(t, recipes["worktrees"])
	r.run(t, recipes["turn-hooks"])
}
