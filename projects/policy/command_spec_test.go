package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// binDir is a folder of fake programs (executable scripts) to put on PATH.
func binDir(t *testing.T, names ...string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	for _, n := range names {
		must(t, os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 0\n"), 0o755))
	}
	return dir
}

func TestCommandSpecBuilds(t *testing.T) {
	f := newFixture(t)
	bin := binDir(t, "tool")
	sb := openSandbox(t, f.proj, "commands:\n  programs: [tool]\n  env: [PATH, LANG]\n")
	environ := []string{"PATH=" + bin, "LANG=C.UTF-8", "AWS_SECRET_ACCESS_KEY=x", "HOME=/home/node", "LD_PRELOAD=/evil.so"}
	spec, err := sb.Command("run_command", CommandRequest{Argv: []string{"tool", "-v"}, Dir: "docs"}, environ)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Program != filepath.Join(bin, "tool") {
		t.Errorf("program %s, want %s", spec.Program, filepath.Join(bin, "tool"))
	}
	if !slices.Equal(spec.Argv, []string{"tool", "-v"}) {
		t.Errorf("argv %q", spec.Argv)
	}
	if spec.Dir != filepath.Join(f.proj, "docs") || spec.Root != f.proj {
		t.Errorf("dir %s root %s", spec.Dir, spec.Root)
	}
	want := []string{"PATH=" + bin, "LANG=C.UTF-8", "HOME=" + f.proj}
	if !slices.Equal(spec.Env, want) {
		t.Errorf("env %q, want %q (scrubbed to the allow-list, HOME the root)", spec.Env, want)
	}
	// No cwd means the root; an absolute cwd inside the root is accepted.
	for _, dir := range []string{"", ".", f.proj, filepath.Join(f.proj, "docs", "..")} {
		spec, err := sb.Command("run_command", CommandRequest{Argv: []string{"tool"}, Dir: dir}, environ)
		if err != nil {
			t.Fatalf("dir %q: %v", dir, err)
		}
		if spec.Dir != f.proj {
			t.Errorf("dir %q resolved to %s, want the root", dir, spec.Dir)
		}
	}
}

func TestCommandSpecRefusals(t *testing.T) {
	f := newFixture(t)
	bin := binDir(t, "tool", "other", "sh")
	inside := filepath.Join(f.proj, "bin")
	must(t, os.MkdirAll(inside, 0o755))
	must(t, os.WriteFile(filepath.Join(inside, "planted"), []byte("#!/bin/sh\n"), 0o755))
	must(t, os.MkdirAll(filepath.Join(f.proj, "sub"), 0o755))
	sb := openSandbox(t, f.proj, "commands:\n  programs: [tool, planted, "+filepath.Join(bin, "other")+"]\n")
	environ := []string{"PATH=" + inside + ":.:" + bin}
	cases := []struct {
		name string
		req  CommandRequest
		typ  string
		msg  string
	}{
		{"empty argv", CommandRequest{}, "invalid_request", "argv"},
		{"program not allowed", CommandRequest{Argv: []string{"ls"}}, "denied", "commands.programs"},
		{"sh -c", CommandRequest{Argv: []string{"sh", "-c", "tool; rm -rf /"}}, "denied", "shell"},
		{"a command line as argv[0]", CommandRequest{Argv: []string{"tool -v"}}, "invalid_request", "argv"},
		{"absolute path not listed", CommandRequest{Argv: []string{filepath.Join(f.outside, "tool")}}, "denied", "commands.programs"},
		{"relative path", CommandRequest{Argv: []string{"./tool"}}, "denied", "absolute"},
		{"allowed name found only inside the root", CommandRequest{Argv: []string{"planted"}}, "not_found", "PATH"},
		{"NUL in an argument", CommandRequest{Argv: []string{"tool", "a\x00b"}}, "invalid_request", "NUL"},
		{"cwd climbs out with ..", CommandRequest{Argv: []string{"tool"}, Dir: "../outside"}, "outside_root", ""},
		{"cwd climbs out from a sub-folder", CommandRequest{Argv: []string{"tool"}, Dir: "sub/../../outside"}, "outside_root", ""},
		{"cwd is a symlink out", CommandRequest{Argv: []string{"tool"}, Dir: "out"}, "outside_root", ""},
		{"cwd is an absolute link out", CommandRequest{Argv: []string{"tool"}, Dir: "outabs"}, "outside_root", ""},
		{"cwd is the prefix sibling", CommandRequest{Argv: []string{"tool"}, Dir: f.evil}, "outside_root", ""},
		{"cwd is a file", CommandRequest{Argv: []string{"tool"}, Dir: "ok.txt"}, "invalid_request", "directory"},
		{"cwd missing", CommandRequest{Argv: []string{"tool"}, Dir: "nope"}, "not_found", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec, err := sb.Command("run_command", c.req, environ)
			wantType(t, err, c.typ)
			if spec != nil {
				t.Errorf("got a spec with the refusal: %+v", spec)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q does not mention %q", err, c.msg)
			}
		})
	}
	// The listed absolute program is allowed, by path or by its name on PATH.
	if _, err := sb.Command("run_command", CommandRequest{Argv: []string{filepath.Join(bin, "other")}}, environ); err != nil {
		t.Errorf("listed absolute program: %v", err)
	}
	if _, err := sb.Command("run_command", CommandRequest{Argv: []string{"other"}}, environ); err != nil {
		t.Errorf("listed absolute program by name: %v", err)
	}
}

func TestCommandSpecPolicy(t *testing.T) {
	f := newFixture(t)
	bin := binDir(t, "tool")
	environ := []string{"PATH=" + bin}
	// The tool's mode and the path rules apply to the working directory.
	sb := openSandbox(t, f.proj, "tools:\n  run_command: deny\ncommands:\n  programs: [tool]\n")
	_, err := sb.Command("run_command", CommandRequest{Argv: []string{"tool"}}, environ)
	wantType(t, err, "denied")
	sb = openSandbox(t, f.proj, "paths:\n  deny: [docs]\ncommands:\n  programs: [tool]\n")
	_, err = sb.Command("run_command", CommandRequest{Argv: []string{"tool"}, Dir: "inabs"}, environ)
	wantType(t, err, "denied")
	// Without PATH in the allow-list, names are not found, and the error says why.
	sb = openSandbox(t, f.proj, "commands:\n  programs: [tool]\n  env: []\n")
	_, err = sb.Command("run_command", CommandRequest{Argv: []string{"tool"}}, environ)
	wantType(t, err, "not_found")
	if !strings.Contains(err.Error(), "commands.env") {
		t.Errorf("error %q does not say to add PATH to commands.env", err)
	}
	// sh -c is a plain argv once sh is listed.
	sh := binDir(t, "sh")
	sb = openSandbox(t, f.proj, "commands:\n  programs: [sh]\n")
	if _, err := sb.Command("run_command", CommandRequest{Argv: []string{"sh", "-c", "true"}}, []string{"PATH=" + sh}); err != nil {
		t.Errorf("sh listed: %v", err)
	}
}
