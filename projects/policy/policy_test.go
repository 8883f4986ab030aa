package policy

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func load(t *testing.T, src string) *Policy {
	t.Helper()
	p, err := Load("policy.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return p
}

func TestAuthorize(t *testing.T) {
	p := load(t, `
tools:
  "*": allow
  run_command: ask
  "skill_graph.*": deny
  "write_*": allow
  write_secret: deny
paths:
  allow: ["**"]
  deny: ["secrets/**", "**/*.pem"]
  read_only: ["vendor/**"]
`)
	for _, c := range []struct {
		tool string
		op   Op
		path string
		want string // "" for allowed
	}{
		{"read_file", OpRead, "src/a.go", ""},
		{"read_file", OpRead, ".", ""},
		{"write_file", OpWrite, "src/a.go", ""},
		{"read_file", OpRead, "secrets/k", ReasonDenied},
		{"read_file", OpRead, "secrets", ReasonDenied},
		{"read_file", OpRead, "a/b/c.pem", ReasonDenied},
		{"read_file", OpRead, ".env", ReasonDenied}, // a default deny kept: paths.deny replaced it? no: see below
		{"write_file", OpWrite, "vendor/x.go", ReasonDenied},
		{"read_file", OpRead, "vendor/x.go", ""},
		{"write_file", OpWrite, ".jido/skills/evil/SKILL.md", ReasonDenied},
		{"write_file", OpWrite, ".jido", ReasonDenied},
		{"write_file", OpWrite, ".JIDO/commands/x.md", ReasonDenied},
		{"write_file", OpWrite, ".git/hooks/pre-commit", ReasonDenied},
		{"read_file", OpRead, ".jido/skills/a/SKILL.md", ""},
		{"write_file", OpWrite, ".jidox/a", ""},
		{"write_file", OpWrite, "src/.jido/a", ""}, // only the root's data dir is the data dir
		{"skill_graph.search", OpRead, "", ReasonDenied},
		{"write_secret", OpWrite, "src/a", ReasonDenied}, // deny beats the allow of write_*
		{"run_command", OpRun, "src", ReasonApprovalRequired},
		{"run_command", OpRun, "secrets", ReasonDenied}, // refused before anyone is asked
		{"read_file", OpRead, "../x", ReasonOutsideRoot},
		{"read_file", OpRead, "/etc/passwd", ReasonOutsideRoot},
	} {
		err := p.Authorize(c.tool, c.op, c.path)
		if c.path == ".env" {
			// paths.deny was given, so it replaced the default list.
			c.want = ""
		}
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want+":") && !strings.Contains(err.Error(), c.want+": ")) {
			t.Errorf("Authorize(%s, %s, %q) = %v, want %q", c.tool, c.op, c.path, err, c.want)
		}
		if c.want != "" {
			wantType(t, err, c.want)
		}
	}
}

func TestDefaultPolicy(t *testing.T) {
	p := Default()
	for _, c := range []struct {
		tool string
		op   Op
		path string
		want string
	}{
		{"anything", OpRead, "a", ""},
		{"write_file", OpWrite, "a/b", ""},
		{"read_file", OpRead, ".env", ReasonDenied},
		{"read_file", OpRead, "sub/.env.local", ReasonDenied},
		{"write_file", OpWrite, ".jido/commands/x.md", ReasonDenied},
		{"write_file", OpWrite, ".git/config", ReasonDenied},
	} {
		err := p.Authorize(c.tool, c.op, c.path)
		if c.want == "" {
			if err != nil {
				t.Errorf("Authorize(%s, %s, %s) = %v", c.tool, c.op, c.path, err)
			}
			continue
		}
		wantType(t, err, c.want)
	}
	if err := p.WithDataDir("data").Authorize("w", OpWrite, "data/skills/x"); err == nil {
		t.Error("a custom data dir is writable")
	}
	if err := (&Policy{}).Authorize("read_file", OpRead, "a"); err == nil {
		t.Error("the zero Policy allowed a tool")
	}
}

func TestLoadRefusals(t *testing.T) {
	for src, want := range map[string]string{
		"tools:\n  \"*\": allow\npaths:\n  alow: [\"**\"]\n": `[4:3] unknown field "alow"`,
		"bogus: 1\n":                             `[1:1] unknown field "bogus"`,
		"tools:\n  x: maybe\n":                   `tools: "x" has mode "maybe"; use allow, deny or ask`,
		"paths:\n  deny: [\"[\"]\n":              `paths.deny: "[" is not a valid glob`,
		"paths:\n  allow: [\"/etc/**\"]\n":       `paths.allow: "/etc/**" is not a valid glob`,
		"tools:\n  \"a[\": allow\n":              `tools: "a[" is not a valid glob`,
		"commands:\n  without_landlock: maybe\n": `without_landlock is "maybe"`,
		"commands:\n  env: [HOME]\n":             `commands.env holds "HOME"`,
		"tools: [\n":                             `policy.yaml: [`,
	} {
		_, err := Load("policy.yaml", []byte(src))
		wantType(t, err, "invalid_request")
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%q) = %v\nwant it to say %s", src, err, want)
		}
	}
	if p := load(t, ""); !slices.Equal(p.Paths.Deny, Default().Paths.Deny) || p.ToolMode("x") != ModeAllow {
		t.Errorf("empty YAML is not the default: %+v", p)
	}
	if p := load(t, "paths:\n  deny: []\n"); len(p.Paths.Deny) != 0 {
		t.Errorf("deny: [] kept %v", p.Paths.Deny)
	}
}

func openSandbox(t *testing.T, dir, policy string) *Sandbox {
	t.Helper()
	return &Sandbox{Root: openRoot(t, dir), Policy: load(t, policy)}
}

// Rules see the resolved path: a link docs/x -> ../secrets/k is secrets/k
// to the rules, and .jido reached through a link is still read-only.
func TestSandboxMatchesResolvedPaths(t *testing.T) {
	f := newFixture(t)
	must(t, os.MkdirAll(filepath.Join(f.proj, ".jido/skills"), 0o755))
	must(t, os.Symlink("../.jido/skills", filepath.Join(f.proj, "docs/sk")))
	must(t, os.Symlink(".jido", filepath.Join(f.proj, "jd")))
	sb := openSandbox(t, f.proj, "paths:\n  deny: [\"secrets/**\"]\n")
	if _, err := sb.ReadFile("read_file", "docs/readme", 100); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"docs/x", "inabs/x", "docs/../secrets/k", "secrets//k", "./secrets/./k", f.proj + "/docs/x"} {
		_, err := sb.ReadFile("read_file", p, 100)
		wantType(t, err, ReasonDenied)
		if !strings.Contains(err.Error(), "secrets/k") {
			t.Errorf("refusal of %s does not name the resolved path: %v", p, err)
		}
		_, err = sb.Stat("read_file", p)
		wantType(t, err, ReasonDenied)
	}
	for _, p := range []string{"docs/sk/evil/SKILL.md", "jd/commands/x.md", ".jido/commands/x.md"} {
		wantType(t, sb.WriteFile("write_file", p, []byte("planted"), 0o644), ReasonDenied)
	}
	// Nothing was created on the way: a refused write leaves no directory.
	for _, d := range []string{".jido/skills/evil", ".jido/commands"} {
		if _, err := os.Lstat(filepath.Join(f.proj, d)); err == nil {
			t.Errorf("refused write created %s", d)
		}
	}
}

func TestSandboxListingHidesDenied(t *testing.T) {
	f := newFixture(t)
	sb := openSandbox(t, f.proj, "paths:\n  deny: [\"secrets/**\", \"**/*.pem\"]\n")
	must(t, os.WriteFile(filepath.Join(f.proj, "docs/cert.pem"), nil, 0o644))
	entries, err := sb.ReadDir("list_dir", "docs")
	must(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"readme", "x"}) {
		t.Errorf("ReadDir(docs) = %v", names)
	}
	var walked []string
	must(t, sb.WalkDir("glob", ".", func(p string, _ fs.DirEntry, err error) error {
		must(t, err)
		walked = append(walked, p)
		return nil
	}))
	for _, p := range walked {
		if strings.HasPrefix(p, "secrets") || strings.HasSuffix(p, ".pem") {
			t.Errorf("walk showed denied %s", p)
		}
	}
	if !slices.Contains(walked, "docs/readme") {
		t.Errorf("walk missed docs/readme: %v", walked)
	}
	_, err = sb.ReadDir("list_dir", "secrets")
	wantType(t, err, ReasonDenied)
}

// The same attack on a path rule: docs/f flips between a file the policy
// allows and a link to secrets/k, which it denies. A read that checks the
// rule and then opens the name would return the key. The link stays in
// the same directory, where os.Root alone would follow it.
func TestSandboxRuleHoldsWhileAFileIsSwappedForALink(t *testing.T) {
	f := newFixture(t)
	sb := openSandbox(t, f.proj, "paths:\n  deny: [\"**/k\"]\n")
	must(t, os.WriteFile(filepath.Join(f.proj, "docs", "k"), []byte("key"), 0o644))
	name, moved := filepath.Join(f.proj, "docs", "f"), filepath.Join(f.proj, "docs", "f.real")
	must(t, os.WriteFile(name, []byte("public"), 0o644))
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			os.Rename(name, moved)
			os.Symlink("k", name)
			os.Remove(name)
			os.Rename(moved, name)
		}
	})
	defer func() { close(done); wg.Wait() }()
	for i := 0; i < 1000; i++ {
		b, _ := sb.ReadFile("read_file", "docs/f", 100)
		if strings.Contains(string(b), "key") {
			t.Fatalf("read %d returned the denied file", i)
		}
	}
}
