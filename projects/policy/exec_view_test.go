//go:build linux

package policy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// A command reads its project, its /tmp, the system's paths and what the
// node's operator adds; nothing else of the machine exists for it, and
// what the operator hides is empty wherever the reads would show it
// (issue 20, item 1).
func TestExecReadsOnlyItsView(t *testing.T) {
	defer goleak.VerifyNone(t)
	needNamespaces(t)
	f := newFixture(t)
	shared := filepath.Join(f.base, "shared")
	must(t, os.MkdirAll(filepath.Join(shared, "other-project"), 0o755))
	must(t, os.WriteFile(filepath.Join(shared, "lib.txt"), []byte("SHARED"), 0o644))
	must(t, os.WriteFile(filepath.Join(shared, "other-project", "secret"), []byte("OTHER"), 0o644))
	must(t, os.WriteFile(filepath.Join(shared, "node.yaml"), []byte("CONFIG"), 0o644))
	sibling := t.TempDir() // beside the fixture's folder
	must(t, os.WriteFile(filepath.Join(sibling, "s"), []byte("SIBLING"), 0o644))
	p, err := Load("p", []byte(shPolicy))
	must(t, err)
	sb := &Sandbox{Root: openRoot(t, f.proj), Policy: p, Host: &Host{
		Read: []string{shared},
		Hide: func() []string {
			return []string{filepath.Join(shared, "other-project"), filepath.Join(shared, "node.yaml"), f.proj, filepath.Dir(f.base)}
		},
	}}
	run := func(script string) *CommandResult {
		t.Helper()
		spec, err := sb.Command("run_command", CommandRequest{Argv: []string{"sh", "-c", script}}, []string{"PATH=/usr/bin:/bin"})
		must(t, err)
		res, err := Exec(context.Background(), spec, ExecOptions{})
		if err != nil {
			t.Fatalf("%q: %v", script, err)
		}
		return res
	}

	res := run(`cat ok.txt docs/readme ` + shared + `/lib.txt; echo; head -c 1 /etc/hosts >/dev/null && echo hosts; ls / >/dev/null && echo root-listed; ` +
		`echo t > /tmp/t && cat /tmp/t && echo "$TMPDIR"; ls /dev/null /dev/urandom >/dev/null && echo devices`)
	for _, want := range []string{"okreadmeSHARED", "hosts", "root-listed", "t\n/tmp", "devices"} {
		if !strings.Contains(string(res.Stdout), want) {
			t.Errorf("a command cannot read what it should (%q): stdout %q stderr %q", want, res.Stdout, res.Stderr)
		}
	}
	for what, c := range map[string]struct{ script, leak string }{
		"a neighbour":            {"cat " + f.outside + "/secret " + f.evil + "/secret", "SECRET"},
		"a link out of the root": {"cat outfile out/secret outabs/secret", "SECRET"},
		"/root and /home":        {"ls -a /root /home", ".."},
		"secrets beside /etc's":  {"cat /etc/shadow; ls /etc/ssl/private", "root"},
		"a hidden project":       {"ls " + shared + "/other-project; cat " + shared + "/other-project/secret", "OTHER"},
		"a hidden file":          {"cat " + shared + "/node.yaml", "CONFIG"},
		// The folders on the way to the root are there, nothing beside them.
		"the test's temp dir": {"ls " + filepath.Dir(f.base) + "; cat " + sibling + "/s", filepath.Base(sibling)},
		"a sibling's file":    {"cat " + sibling + "/s", "SIBLING"},
		"the node's /tmp":     {"ls /tmp", "jido-cmd-"},
	} {
		res := run(c.script)
		if strings.Contains(string(res.Stdout), c.leak) {
			t.Errorf("%s is readable: %q printed %q (stderr %q)", what, c.script, res.Stdout, res.Stderr)
		}
	}
	// Its /tmp is its own: what one call leaves there the next does not see.
	run("echo mine > /tmp/mine")
	if res := run("cat /tmp/mine"); strings.Contains(string(res.Stdout), "mine") {
		t.Errorf("a call sees the /tmp of the one before it")
	}
}

// The program itself is readable wherever it lies, even outside the
// system paths (an absolute path the policy lists).
func TestExecRunsAProgramOutsideTheSystemPaths(t *testing.T) {
	defer goleak.VerifyNone(t)
	needNamespaces(t)
	f := newFixture(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "hello")
	must(t, os.WriteFile(prog, []byte("#!/bin/sh\necho hello from $0\n"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "beside"), []byte("BESIDE"), 0o644))
	res, err := execIn(t, context.Background(), f.proj, "commands:\n  programs: ["+prog+"]\n", ExecOptions{}, prog)
	if err != nil || res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "hello from "+prog) {
		t.Fatalf("got %+v %v", res, err)
	}
	// Not its folder.
	res, err = execIn(t, context.Background(), f.proj, shPolicy, ExecOptions{}, "sh", "-c", "cat "+filepath.Join(dir, "beside"))
	if err != nil || strings.Contains(string(res.Stdout), "BESIDE") {
		t.Errorf("the program's folder is readable: %+v %v", res, err)
	}
}

// A project rooted at /tmp itself cannot run commands: /tmp is each
// command's own; the refusal says so.
func TestViewRefusesARootAtTmp(t *testing.T) {
	_, err := viewEntries(&CommandSpec{Root: commandTemp})
	wantType(t, err, ReasonDenied)
}
func TestKernelVersion(t *testing.T) {
	for release, want := range map[string][2]int{"6.18.44-fc-v657": {6, 18}, "6.14.0": {6, 14}, "5.15.0-91-generic": {5, 15}, "6.1": {6, 1}} {
		a, b, ok := kernelVersion(release)
		if !ok || a != want[0] || b != want[1] {
			t.Errorf("kernelVersion(%q) = %d, %d, %v", release, a, b, ok)
		}
	}
}

// TMPDIR is the command's own /tmp even where the node's operator lets
// commands inherit the node's TMPDIR (a folder not in the command's
// view): the environment holds it once, so a program that reads the first
// of two (glibc's getenv, Go's os.Getenv) does not get the node's.
func TestExecTMPDIRIsTheCommands(t *testing.T) {
	defer goleak.VerifyNone(t)
	needNamespaces(t)
	f := newFixture(t)
	p, err := Load("p", []byte("commands:\n  programs: [env]\n"))
	must(t, err)
	sb := &Sandbox{Root: openRoot(t, f.proj), Policy: p.WithInherit(&Inherit{Names: []string{"PATH", "TMPDIR"}})}
	spec, err := sb.Command("run_command", CommandRequest{Argv: []string{"env"}}, []string{"PATH=/usr/bin:/bin", "TMPDIR=" + f.outside})
	must(t, err)
	res, err := Exec(context.Background(), spec, ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var tmpdirs []string
	for _, kv := range strings.Split(string(res.Stdout), "\n") {
		if strings.HasPrefix(kv, "TMPDIR=") {
			tmpdirs = append(tmpdirs, kv)
		}
	}
	if strings.Join(tmpdirs, " ") != "TMPDIR=/tmp" {
		t.Errorf("the command's environment holds %q, want TMPDIR=/tmp alone", tmpdirs)
	}
}
