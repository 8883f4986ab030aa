package policy

import (
	"slices"
	"strings"
	"testing"
)

// Where the kernel lacks a feature a command is refused, naming what is
// missing and what to do; a project cannot lift that alone: its policy's
// without_*: warn takes effect only where the node's operator allows
// weaker confinement (Host.AllowWeaker).
func TestAdmitWeakerNeedsTheOperator(t *testing.T) {
	full := confinementFor(7)
	full.Namespaces, full.PIDMax, full.Root = true, true, true
	noNS := full
	noNS.Namespaces = false
	noPIDMax := full
	noPIDMax.PIDMax = false
	noLandlock := confinementFor(0)
	noLandlock.Namespaces, noLandlock.PIDMax = true, true

	for _, c := range []struct {
		name     string
		c        Confinement
		key      string // the policy key that would lift it
		refusing []string
	}{
		{"no user namespaces", noNS, "without_namespaces", []string{"namespaces of its own", "user.max_user_namespaces", "--sandbox-allow-weaker"}},
		{"no pid_max as root", noPIDMax, "without_namespaces", []string{"bound on its processes", "6.14"}},
		{"no Landlock", noLandlock, "without_landlock", []string{"Landlock"}},
	} {
		for _, cs := range []struct {
			operator, project bool
		}{{false, false}, {false, true}, {true, false}, {true, true}} {
			pol := "commands:\n  programs: [sh]\n"
			if cs.project {
				pol += "  " + c.key + ": warn\n"
			}
			p, err := Load("p", []byte(pol))
			must(t, err)
			sb := &Sandbox{Root: openRoot(t, t.TempDir()), Policy: p, Host: &Host{AllowWeaker: cs.operator}}
			spec, err := sb.Command("run_command", CommandRequest{Argv: []string{"sh"}}, []string{"PATH=/usr/bin:/bin"})
			must(t, err)
			warning, err := c.c.admit(spec)
			if cs.operator && cs.project {
				if err != nil || !strings.Contains(warning, "weaker confinement") {
					t.Errorf("%s, allowed by the operator and asked by the policy: %q, %v; want a warning", c.name, warning, err)
				}
				continue
			}
			wantType(t, err, ReasonDenied)
			for _, want := range append(c.refusing, "commands."+c.key+": warn") {
				if err != nil && !strings.Contains(err.Error(), want) {
					t.Errorf("%s (operator %v, policy %v): the refusal %q does not say %q", c.name, cs.operator, cs.project, err, want)
				}
			}
		}
	}
	// Everything there: admitted, no warning.
	spec := &CommandSpec{Protect: []string{".jido", ".git"}}
	if w, err := full.admit(spec); err != nil || w != "" {
		t.Errorf("full confinement: %q, %v", w, err)
	}
	// A non-root node without pid_max is bounded by RLIMIT_NPROC in the
	// command's user namespace.
	nonRoot := noPIDMax
	nonRoot.Root = false
	if w, err := nonRoot.admit(spec); err != nil || w != "" || nonRoot.ProcessBound() != BoundNProcUserNS {
		t.Errorf("non-root without pid_max: %q, %v, bound %q", w, err, nonRoot.ProcessBound())
	}
	for _, bad := range []string{"commands:\n  without_namespaces: maybe\n", "commands:\n  without_landlock: yes\n"} {
		if _, err := Load("p", []byte(bad)); err == nil {
			t.Errorf("%q loads", bad)
		}
	}
}

func TestConfinementSays(t *testing.T) {
	c := confinementFor(7)
	c.Namespaces, c.PIDMax, c.Root = true, true, true
	s := c.String()
	for _, want := range []string{"only its project", "no network unless allowed", "nothing it starts outlives it",
		".jido and .git read-only to commands", "processes bounded by pid_max", "landlock ABI 7", "UDP"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q does not say %q", s, want)
		}
	}
	c.PIDMax = false
	if s := c.String(); !strings.Contains(s, "processes not bounded") {
		t.Errorf("%q does not say processes are not bounded", s)
	}
}

// Report says what `project get` shows: whether run_command runs and why
// not, what commands read, how many paths are hidden, the limits and what
// bounds the processes.
func TestSandboxReport(t *testing.T) {
	root := t.TempDir()
	p, err := Load("p", []byte("commands:\n  programs: [sh]\n  without_namespaces: warn\n  limits: {processes: 100}\n"))
	must(t, err)
	sb := &Sandbox{Root: openRoot(t, root), Policy: p, Host: &Host{
		Read: []string{"/opt/tools"},
		// The project's own root and a folder holding it are not hidden
		// from it: that would hide the project itself.
		Hide: func() []string { return []string{"/srv/data", "/srv/other", root, "/"} },
	}}
	full := confinementFor(7)
	full.Namespaces, full.PIDMax, full.Root = true, true, true
	r := sb.Report(full)
	if r.RunCommand != "confined" || r.Reason != "" || r.Hidden != 2 || r.Limits.Processes != 100 || r.ProcessesBoundBy != BoundPIDMax ||
		!slices.Contains(r.Reads, "/opt/tools") || !slices.Contains(r.Reads, "/usr") {
		t.Errorf("full confinement: %+v", r)
	}
	noNS := full
	noNS.Namespaces = false
	if r := sb.Report(noNS); r.RunCommand != "refused" || !strings.Contains(r.Reason, "--sandbox-allow-weaker") {
		t.Errorf("no namespaces, the operator does not allow weaker: %+v", r)
	}
	sb.Host.AllowWeaker = true
	if r := sb.Report(noNS); r.RunCommand != "weaker" || !strings.Contains(r.Reason, "namespaces of its own") {
		t.Errorf("no namespaces, allowed by both: %+v", r)
	}
	sb.Policy = Default()
	if r := sb.Report(full); r.RunCommand != "not offered" {
		t.Errorf("no programs: %+v", r)
	}
}
